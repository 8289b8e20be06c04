package simtest

import (
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestArgsStrict(t *testing.T) {
	td := func(args ...datadriven.CmdArg) *datadriven.TestData {
		return &datadriven.TestData{Pos: "steps.txt:7", Cmd: "advance", CmdArgs: args}
	}
	kv := func(k string, v ...string) datadriven.CmdArg { return datadriven.CmdArg{Key: k, Vals: v} }
	tests := []struct {
		name    string
		td      *datadriven.TestData
		read    func(a *Args) string
		want    string
		wantErr string
	}{
		{name: "positional and keyed", td: td(kv("A"), kv("1s"), kv("mode", "power")),
			read: func(a *Args) string {
				p, d := a.Pos("process"), a.ParseDuration("d", a.Pos("duration"))
				return fmt.Sprint(p, d, a.OneOf("mode", "process", "process", "power"))
			}, want: "A1spower"},
		{name: "leftover keyed argument", td: td(kv("1s"), kv("extra", "2")),
			read:    func(a *Args) string { return a.Pos("duration") },
			wantErr: "steps.txt:7: advance: unexpected arguments: extra=2"},
		{name: "leftover word", td: td(kv("1s"), kv("typo")),
			read:    func(a *Args) string { return a.Pos("duration") },
			wantErr: "steps.txt:7: advance: unexpected arguments: typo"},
		{name: "missing positional", td: td(),
			read:    func(a *Args) string { return a.Pos("duration") },
			wantErr: "steps.txt:7: advance: missing duration"},
		{name: "bad duration", td: td(kv("for", "soon")),
			read:    func(a *Args) string { return a.Duration("for", time.Second).String() },
			wantErr: `steps.txt:7: advance: for: "soon" is not a duration (like 1s, 250ms, -20s)`},
		{name: "value outside the allowed ones", td: td(kv("mode", "reboot")),
			read:    func(a *Args) string { return a.OneOf("mode", "process", "process", "power") },
			wantErr: "steps.txt:7: advance: mode=reboot: unknown value (allowed: process, power)"},
		{name: "defaults", td: td(),
			read: func(a *Args) string {
				return fmt.Sprint(a.Int("n", 3), a.Duration("d", time.Second), a.String("s", "x"), a.Bool("flag"))
			}, want: "3 1sxfalse"},
		{name: "list value and keys", td: td(kv("kinds", "a", "b"), kv("lock.ttl", "2s")),
			read: func(a *Args) string {
				keys := a.Keys()
				return fmt.Sprint(a.Vals("kinds"), keys, a.String("lock.ttl", ""))
			}, want: "[a b] [kinds lock.ttl]2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			msg := Failure(t, func(tb testing.TB) {
				a := NewArgs(tb, tt.td)
				got = tt.read(a)
				a.Done()
			})
			if tt.wantErr != "" {
				assert.Equal(t, tt.wantErr, msg)
				return
			}
			require.Empty(t, msg)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		line string
		want []string
		err  bool
	}{
		{line: "SET k v", want: []string{"SET", "k", "v"}},
		{line: `  SET "a key"  "x\ty" `, want: []string{"SET", "a key", "x\ty"}},
		{line: `SET "open`, err: true},
		{line: "", want: nil},
		{line: `SET "" " -0" "a\"b"`, want: []string{"SET", "", " -0", `a"b`}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got, err := Words(tt.line)
			if tt.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			again, err := Words(JoinWords(got))
			require.NoError(t, err)
			assert.Equal(t, tt.want, again, "JoinWords writes what Words reads back")
		})
	}
}
