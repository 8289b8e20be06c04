package clockshift

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

//go:embed csrc/clockshift.c
var source []byte

// ErrNoCompiler is returned (wrapped) by Build when no C compiler is found.
var ErrNoCompiler = errors.New("no C compiler")

// Build compiles the preload library into dir with the system C compiler
// ($CC, else cc) and returns the path of the shared object. The file name
// carries a hash of the source, so a second Build into the same directory
// reuses the library, and builds running in parallel into one directory
// each write a private file and rename it into place.
func Build(dir string) (string, error) {
	sum := sha256.Sum256(source)
	so := filepath.Join(dir, "clockshift-"+hex.EncodeToString(sum[:6])+".so")
	if st, err := os.Stat(so); err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		return so, nil
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	ccPath, err := exec.LookPath(cc)
	if err != nil {
		return "", fmt.Errorf("clockshift: %w: %q is not on PATH (install one, e.g. apt-get install gcc, or set CC)", ErrNoCompiler, cc)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("clockshift: build directory: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, "clockshift-build-")
	if err != nil {
		return "", fmt.Errorf("clockshift: build directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "clockshift.c")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", fmt.Errorf("clockshift: %w", err)
	}
	out := filepath.Join(tmp, "clockshift.so")
	cmd := exec.Command(ccPath, "-shared", "-fPIC", "-O2", "-Wall", "-o", out, src)
	// Killed if this process dies first, like the servers (launch).
	cmd.Dir = tmp
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("clockshift: %s failed: %v\n%s", ccPath, err, msg)
	}
	if err := os.Rename(out, so); err != nil {
		return "", fmt.Errorf("clockshift: %w", err)
	}
	return so, nil
}
