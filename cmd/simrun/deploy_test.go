package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/fuzz"
)

// k8sDocs decodes every YAML document of a manifest file.
func k8sDocs(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var out []map[string]any
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err, path)
		out = append(out, doc)
	}
}

// dig follows keys (strings for maps, ints for lists) through a decoded
// document.
func dig(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			require.True(t, ok, "%v: not a map at %q", path, k)
			v = m[k]
		case int:
			l, ok := v.([]any)
			require.True(t, ok && k < len(l), "%v: not a list with item %d", path, k)
			v = l[k]
		}
	}
	return v
}

func strs(t *testing.T, v any) []string {
	t.Helper()
	l, ok := v.([]any)
	require.True(t, ok, "want a list, got %T", v)
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = fmt.Sprint(x)
	}
	return out
}

// parseArgs parses a container's args with simrun's own command tree and
// returns the command and its positional arguments.
func parseArgs(t *testing.T, args []string) (*cobra.Command, []string) {
	t.Helper()
	root := newRoot(io.Discard, io.Discard)
	cmd, rest, err := root.Find(args)
	require.NoError(t, err, "%q", args)
	require.NoError(t, cmd.ParseFlags(rest), "%q: flags simrun does not know", args)
	return cmd, cmd.Flags().Args()
}

// TestDeployManifests parses deploy/k8s: the Indexed Job's command, with
// each completion index substituted, is a valid simrun fuzz shard K/N
// (N the completions) into a folder of its own, its base scenario
// exists; the merge Job joins exactly those folders; and the Dockerfile
// builds the static binary the Jobs run.
func TestDeployManifests(t *testing.T) {
	shards := k8sDocs(t, filepath.Join("..", "..", "deploy", "k8s", "fuzz-shards.yaml"))
	var job map[string]any
	for _, d := range shards {
		if d["kind"] == "Job" {
			job = d
		}
	}
	require.NotNil(t, job, "an Indexed Job")
	assert.Equal(t, "Indexed", dig(t, job, "spec", "completionMode"))
	n, ok := dig(t, job, "spec", "completions").(int)
	require.True(t, ok)
	require.Positive(t, n)
	ctr := dig(t, job, "spec", "template", "spec", "containers", 0)
	env := dig(t, ctr, "env", 0)
	assert.Equal(t, "JOB_COMPLETION_INDEX", dig(t, env, "name"))
	assert.Equal(t, "metadata.annotations['batch.kubernetes.io/job-completion-index']", dig(t, env, "valueFrom", "fieldRef", "fieldPath"))
	args := strs(t, dig(t, ctr, "args"))
	mount := dig(t, ctr, "volumeMounts", 0, "mountPath").(string)

	outs := map[string]bool{}
	var campaign string
	for k := 0; k < n; k++ {
		var a []string
		for _, s := range args {
			a = append(a, strings.ReplaceAll(s, "$(JOB_COMPLETION_INDEX)", strconv.Itoa(k)))
		}
		cmd, pos := parseArgs(t, a)
		require.Equal(t, "fuzz", cmd.Name())
		require.Len(t, pos, 1)
		_, err := loadScenario(pos[0])
		require.NoError(t, err, "the base scenario")
		sh, err := cmd.Flags().GetString("shard")
		require.NoError(t, err)
		got, err := fuzz.ParseShard(sh)
		require.NoError(t, err)
		assert.Equal(t, fuzz.Shard{K: k, N: n}, got, "index %d runs shard %d/%d", k, k, n)
		out, _ := cmd.Flags().GetString("out")
		assert.True(t, strings.HasPrefix(out, mount+"/"), "%s is on the shared volume %s", out, mount)
		assert.False(t, outs[out], "shard %d writes a folder of its own", k)
		outs[out] = true
		for _, f := range []string{"runs", "seed", "workers"} {
			assert.True(t, cmd.Flags().Changed(f), "--%s is fixed in the manifest", f)
		}
		// Every shard is the same campaign: only --shard and --out differ.
		var key []string
		cmd.Flags().Visit(func(fl *pflag.Flag) {
			if fl.Name != "shard" && fl.Name != "out" {
				key = append(key, fl.Name+"="+fl.Value.String())
			}
		})
		if k == 0 {
			campaign = strings.Join(key, " ")
		}
		assert.Equal(t, campaign, strings.Join(key, " "))
	}

	merge := k8sDocs(t, filepath.Join("..", "..", "deploy", "k8s", "fuzz-merge.yaml"))
	require.Len(t, merge, 1)
	margs := strs(t, dig(t, merge[0], "spec", "template", "spec", "containers", 0, "args"))
	cmd, pos := parseArgs(t, margs)
	require.Equal(t, "merge", cmd.Name())
	got := map[string]bool{}
	for _, p := range pos {
		got[p] = true
	}
	assert.Equal(t, outs, got, "the merge joins exactly the shards' folders")
	mout, _ := cmd.Flags().GetString("out")
	assert.False(t, outs[mout])

	docker := string(mustRead(t, filepath.Join("..", "..", "deploy", "Dockerfile")))
	assert.Contains(t, docker, "CGO_ENABLED=0 go build")
	assert.Contains(t, docker, "./cmd/simrun")
	assert.Contains(t, docker, `ENTRYPOINT ["/simrun"]`)
}
