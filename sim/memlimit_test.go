package sim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestCgroupMemoryLimit reads the limits of the process's cgroup and its
// ancestors, in both cgroup versions.
func TestCgroupMemoryLimit(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  int64
		src   string
	}{
		{"v2 own limit", map[string]string{"self": "0::/kubepods/pod1/c1\n", "fs/kubepods/pod1/c1/memory.max": "1073741824\n", "fs/kubepods/memory.max": "max\n"},
			1 << 30, "memory.max"},
		{"v2 ancestor is smaller", map[string]string{"self": "0::/kubepods/pod1/c1\n", "fs/kubepods/pod1/c1/memory.max": "max\n", "fs/kubepods/pod1/memory.max": "536870912\n"},
			512 << 20, "memory.max"},
		{"v2 no limit", map[string]string{"self": "0::/a\n", "fs/a/memory.max": "max\n"}, 0, ""},
		{"v1 shared controller line", map[string]string{"self": "9:cpu,memory:/docker/x\n1:cpuset:/\n", "fs/memory/docker/x/memory.limit_in_bytes": "268435456\n"},
			256 << 20, "memory.limit_in_bytes"},
		{"v1 unlimited", map[string]string{"self": "4:memory:/p\n", "fs/memory/p/memory.limit_in_bytes": "9223372036854771712\n"}, 0, ""},
		// A cgroup namespace shows a path the mount does not have: the
		// mount's root is the namespace's cgroup.
		{"v1 namespaced", map[string]string{"self": "4:memory:/process_api/abc\n", "fs/memory/memory.limit_in_bytes": "2147483648\n"},
			2 << 30, "memory.limit_in_bytes"},
		{"both versions: the smaller", map[string]string{"self": "4:memory:/p\n0::/q\n", "fs/memory/p/memory.limit_in_bytes": "2147483648\n", "fs/q/memory.max": "1073741824\n"},
			1 << 30, "memory.max"},
		{"garbage", map[string]string{"self": "not a cgroup file\n"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeTree(t, tt.files)
			n, src := cgroupMemoryLimit(filepath.Join(root, "self"), filepath.Join(root, "fs"))
			assert.Equal(t, tt.want, n)
			assert.Contains(t, src, tt.src)
		})
	}
	n, _ := cgroupMemoryLimit("/nonexistent/cgroup", "/nonexistent")
	assert.Zero(t, n)
}

// TestDefaultMemoryBudget: a share of the memory the process may use or of
// 2 GiB, whichever is smaller (issue 33 item 8: a 4 GiB budget let a
// runaway reach 4.06 GB); under an address-space limit, an eighth of what
// is left above the runtime's reservations.
func TestDefaultMemoryBudget(t *testing.T) {
	assert.Equal(t, int64(2<<30)/100*40, defaultBudgetFor(MemoryLimit{}))
	assert.Equal(t, int64(2<<30)/100*40, defaultBudgetFor(MemoryLimit{Bytes: 64 << 30}))
	assert.Equal(t, int64(2<<30)/100*40, defaultBudgetFor(MemoryLimit{Bytes: 64 << 30, Virtual: true}))
	assert.Equal(t, int64(1<<30)/100*40, defaultBudgetFor(MemoryLimit{Bytes: 1 << 30}))
	assert.Equal(t, int64(4<<30-addressSpaceBase)/8, defaultBudgetFor(MemoryLimit{Bytes: 4 << 30, Virtual: true}))
	assert.Equal(t, int64(1<<20), defaultBudgetFor(MemoryLimit{Bytes: 1 << 30, Virtual: true}), "below the runtime's reservations: the smallest budget")
}
