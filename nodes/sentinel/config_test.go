package sentinel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultConfigMatchesSentinelConf(t *testing.T) {
	c := DefaultConfig()
	assert.Equal(t, "mymaster", c.MasterName)
	assert.Equal(t, 2, c.Quorum)
	assert.Equal(t, 30*time.Second, c.DownAfter)
	assert.Equal(t, 180*time.Second, c.FailoverTimeout)
	assert.Equal(t, 1, c.ParallelSyncs)
}

func TestValidate(t *testing.T) {
	valid := func() Config {
		c := DefaultConfig()
		c.Master = "A"
		c.Replicas = []string{"B", "C"}
		c.Sentinels = []string{"S1", "S2", "S3"}
		return c
	}
	tests := []struct {
		name   string
		modify func(*Config)
		errHas string // "" means valid
	}{
		{"defaults with names", func(c *Config) {}, ""},
		{"no replicas, no peers", func(c *Config) { c.Replicas, c.Sentinels = nil, nil }, ""},
		{"quorum above sentinel count is allowed, as in Redis", func(c *Config) { c.Quorum = 5 }, ""},
		{"empty master name", func(c *Config) { c.MasterName = "" }, "MasterName"},
		{"master name with space", func(c *Config) { c.MasterName = "my master" }, "MasterName"},
		{"no master", func(c *Config) { c.Master = "" }, "Master is empty"},
		{"replica is master", func(c *Config) { c.Replicas = []string{"A"} }, `Replicas[0] "A" is already named by Master`},
		{"duplicate replica", func(c *Config) { c.Replicas = []string{"B", "B"} }, `Replicas[1] "B"`},
		{"empty replica", func(c *Config) { c.Replicas = []string{""} }, "Replicas[0] is empty"},
		{"sentinel is a replica", func(c *Config) { c.Sentinels = []string{"B"} }, `Sentinels[0] "B" is already named by Replicas[0]`},
		{"duplicate sentinel", func(c *Config) { c.Sentinels = []string{"S1", "S1"} }, "Sentinels[1] \"S1\" repeats Sentinels[0]"},
		{"zero quorum", func(c *Config) { c.Quorum = 0 }, "Quorum 0"},
		{"zero down-after", func(c *Config) { c.DownAfter = 0 }, "DownAfter"},
		{"sub-millisecond down-after", func(c *Config) { c.DownAfter = time.Microsecond }, "DownAfter"},
		{"negative failover timeout", func(c *Config) { c.FailoverTimeout = -time.Second }, "FailoverTimeout"},
		{"zero parallel syncs", func(c *Config) { c.ParallelSyncs = 0 }, "ParallelSyncs 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := valid()
			tt.modify(&c)
			err := c.Validate()
			if tt.errHas == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.errHas)
		})
	}
}

func TestNewPanicsOnInvalidConfig(t *testing.T) {
	assert.Panics(t, func() { New(Config{}) })
}
