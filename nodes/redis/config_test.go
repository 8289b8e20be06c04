package redis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locksim/locksim/sim"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(c *Config)
		err    string
	}{
		{"default", func(c *Config) {}, ""},
		{"fsync", func(c *Config) { c.AppendFsync = "sometimes" }, "AppendFsync"},
		{"save", func(c *Config) { c.Save = []SavePoint{{Seconds: 0, Changes: 1}} }, "Save[0]"},
		{"hz-low", func(c *Config) { c.Hz = 0 }, "Hz"},
		{"hz-high", func(c *Config) { c.Hz = 501 }, "Hz"},
		{"min-replicas", func(c *Config) { c.MinReplicasToWrite = -1 }, "MinReplicasToWrite"},
		{"max-lag-fraction", func(c *Config) { c.MinReplicasMaxLag = 1500 * time.Millisecond }, "MinReplicasMaxLag"},
		{"repl-timeout", func(c *Config) { c.ReplTimeout = 0 }, "ReplTimeout"},
		{"ping-period", func(c *Config) { c.ReplPingReplicaPeriod = -time.Second }, "ReplPingReplicaPeriod"},
		{"priority", func(c *Config) { c.ReplicaPriority = -1 }, "ReplicaPriority"},
		{"delay", func(c *Config) { c.ReplicationDelay = sim.Range{Lo: 2, Hi: 1} }, "ReplicationDelay"},
		{"replicaof", func(c *Config) { c.ReplicaOf = "a b" }, "ReplicaOf"},
		{"no-save", func(c *Config) { c.Save = nil }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.modify(&c)
			err := c.Validate()
			if tt.err == "" {
				assert.NoError(t, err)
				return
			}
			if assert.Error(t, err) {
				assert.Contains(t, err.Error(), tt.err)
			}
		})
	}
	assert.Panics(t, func() { New(Config{}) })
}

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	assert.False(t, c.AppendOnly)
	assert.Equal(t, FsyncEverysec, c.AppendFsync)
	assert.Equal(t, []SavePoint{{3600, 1}, {300, 100}, {60, 10000}}, c.Save)
	assert.Equal(t, 10, c.Hz)
	assert.Equal(t, 0, c.MinReplicasToWrite)
	assert.Equal(t, 10*time.Second, c.MinReplicasMaxLag)
	assert.True(t, c.ReplicaReadOnly)
	assert.Equal(t, "", c.ReplicaOf)
}

func TestParseLL(t *testing.T) {
	for _, tt := range []struct {
		in string
		ok bool
		v  int64
	}{
		{"0", true, 0}, {"7", true, 7}, {"-7", true, -7}, {"123", true, 123},
		{"-9223372036854775808", true, -9223372036854775808}, {"9223372036854775807", true, 9223372036854775807},
		{"9223372036854775808", false, 0}, {"", false, 0}, {"-", false, 0}, {"-0", false, 0}, {"01", false, 0},
		{"+1", false, 0}, {" 1", false, 0}, {"1 ", false, 0}, {"1.0", false, 0}, {"0x10", false, 0},
		{"999999999999999999", true, 999999999999999999}, {"-999999999999999999", true, -999999999999999999},
		{"1000000000000000000", true, 1000000000000000000}, {"-1000000000000000000", true, -1000000000000000000},
		{"10000", true, 10000}, {"12a", false, 0}, {"-12a", false, 0}, {"99999999999999999999", false, 0},
	} {
		v, ok := parseLL(tt.in)
		assert.Equal(t, tt.ok, ok, tt.in)
		assert.Equal(t, tt.v, v, tt.in)
	}
}
