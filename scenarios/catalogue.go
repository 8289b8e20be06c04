package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// The built-in catalogue: one scenario file per entry, in the same format
// users write (SCENARIO_FORMAT.md). Each carries its source and a why: field
// that says why the expected verdict follows from the model.
//
//go:embed catalogue/*.yaml
var catalogueFS embed.FS

// Catalogue returns the built-in scenarios sorted by name. A catalogue file
// that does not parse is a bug of the build; Catalogue returns its error.
func Catalogue() ([]*Scenario, error) {
	entries, err := fs.ReadDir(catalogueFS, "catalogue")
	if err != nil {
		return nil, err
	}
	var out []*Scenario
	for _, e := range entries {
		if !catalogueEntry(e.Name()) {
			continue
		}
		data, err := catalogueFS.ReadFile(path.Join("catalogue", e.Name()))
		if err != nil {
			return nil, err
		}
		s, err := Parse(path.Join("catalogue", e.Name()), data)
		if err != nil {
			return nil, err
		}
		if s.Name+".yaml" != e.Name() {
			return nil, fmt.Errorf("catalogue/%s: name %q does not match the file name", e.Name(), s.Name)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// catalogueEntry reports whether a file of the catalogue folder is a
// catalogue entry, NAME.yaml with a NAME of letters, digits and dashes.
// Anything else is a stray file compiled in by the embed pattern (a
// NAME.shrunk.yaml a user wrote beside the catalogue): skipped, so that it
// cannot break simrun list.
func catalogueEntry(file string) bool {
	name, ok := strings.CutSuffix(file, ".yaml")
	if !ok || name == "" {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Builtin returns the built-in scenario with the given name.
func Builtin(name string) (*Scenario, error) {
	if !catalogueEntry(name + ".yaml") {
		return nil, &NotFoundError{Name: name}
	}
	data, err := catalogueFS.ReadFile(path.Join("catalogue", name+".yaml"))
	if err != nil {
		return nil, &NotFoundError{Name: name}
	}
	return Parse(path.Join("catalogue", name+".yaml"), data)
}

// BuiltinSource returns the YAML text of a built-in scenario.
func BuiltinSource(name string) ([]byte, error) {
	data, err := catalogueFS.ReadFile(path.Join("catalogue", name+".yaml"))
	if err != nil {
		return nil, &NotFoundError{Name: name}
	}
	return data, nil
}

// NotFoundError says that a name is neither a built-in scenario nor a file.
type NotFoundError struct {
	Name string
}

func (e *NotFoundError) Error() string {
	names := BuiltinNames()
	return fmt.Sprintf("%q is neither a built-in scenario nor a file (built-ins: %s; `simrun list` describes them)", e.Name, strings.Join(names, ", "))
}

// BuiltinNames lists the built-in scenario names, sorted.
func BuiltinNames() []string {
	entries, _ := fs.ReadDir(catalogueFS, "catalogue")
	var out []string
	for _, e := range entries {
		if catalogueEntry(e.Name()) {
			out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
		}
	}
	sort.Strings(out)
	return out
}

// Load returns the scenario named by arg: a file path when arg names an
// existing file or ends in .yaml/.yml, otherwise a built-in name.
func Load(arg string) (*Scenario, error) {
	st, err := os.Stat(arg)
	switch {
	case err == nil && st.IsDir():
		return nil, fmt.Errorf("%s is a directory, not a scenario file", arg)
	case err == nil:
		data, err := ReadFile(arg)
		if err != nil {
			return nil, err
		}
		return Parse(arg, data)
	case strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") || strings.ContainsRune(arg, os.PathSeparator):
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: %v", arg, err)
	}
	return Builtin(arg)
}
