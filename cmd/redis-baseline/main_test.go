package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
)

func TestArgs(t *testing.T) {
	for _, tt := range []struct {
		args []string
		err  string
	}{
		{[]string{"--cycles", "0"}, "--cycles must be 1 to 10,000,000"},
		{[]string{"--servers", "99"}, "--servers must be 1 to 15"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"--frobnicate"}, "flag provided but not defined"},
	} {
		var out, errb bytes.Buffer
		assert.Equal(t, 2, run(tt.args, &out, &errb), tt.args)
		assert.Contains(t, errb.String(), tt.err)
	}
}

// TestMeasure runs a short measurement on real servers and checks that
// they are gone afterwards.
func TestMeasure(t *testing.T) {
	simtest.NeedBinaries(t, "the real-Redis baseline", "apt-get install -y redis-server", "redis-server")
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"--cycles", "200", "--servers", "3", "--json"}, &out, &errb), errb.String())
	var r Result
	require.NoError(t, json.Unmarshal(out.Bytes(), &r))
	assert.Equal(t, 200, r.Cycles)
	assert.Equal(t, 3, r.Servers)
	assert.Greater(t, r.CyclesPerSec, 0.0)
}
