package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallCampaign is a campaign with findings, and one without.
func smallCampaigns(t *testing.T) (found, clean *Result) {
	t.Helper()
	var err error
	// Lock safety only: the report tests below expect findings of one kind
	// (the campaign changed when the generator gained clock-strobe,
	// partition-ring and revert_after, and found a resource-only one).
	found, err = Run(context.Background(), Config{Base: builtin(t, "redlock-clock-jump"), Seed: 1, Runs: 100, Workers: 2, Keep: 2, Checks: []string{"lock-safety"}})
	require.NoError(t, err)
	require.NotEmpty(t, found.Findings)
	clean, err = Run(context.Background(), Config{Base: builtin(t, "redlock-clock-jump"), Seed: 1, Runs: 20, Workers: 2, Kinds: []string{"heal"}})
	require.NoError(t, err)
	require.Empty(t, clean.Findings)
	return found, clean
}

// JUnit as CI systems read it.
type xSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Props    []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Body    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestWriteJUnit(t *testing.T) {
	found, clean := smallCampaigns(t)
	tests := []struct {
		name  string
		res   *Result
		cases int
		fails int
	}{
		{name: "findings", res: found, cases: len(found.Findings), fails: len(found.Findings)},
		{name: "nothing found", res: clean, cases: 1, fails: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, WriteJUnit(&b, tt.res))
			require.True(t, strings.HasPrefix(b.String(), "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites"), b.String())
			var doc xSuites
			require.NoError(t, xml.Unmarshal(b.Bytes(), &doc))
			require.Len(t, doc.Suites, 1)
			s := doc.Suites[0]
			assert.Equal(t, "simrun fuzz redlock-clock-jump", s.Name)
			assert.Equal(t, tt.cases, doc.Tests)
			assert.Equal(t, tt.cases, s.Tests)
			assert.Equal(t, tt.fails, doc.Failures)
			assert.Equal(t, tt.fails, s.Failures)
			require.Len(t, s.Cases, tt.cases)
			fails := 0
			for i, c := range s.Cases {
				assert.NotEmpty(t, c.Name)
				assert.True(t, strings.HasPrefix(c.Classname, "simrun.fuzz.redlock-clock-jump"), c.Classname)
				if c.Failure == nil {
					continue
				}
				fails++
				f := tt.res.Findings[i]
				assert.Contains(t, c.Name, fmt.Sprintf("run %d seed %d", f.Run, f.Seed))
				assert.Contains(t, c.Failure.Message, "lock-safety violated")
				assert.Contains(t, c.Failure.Body, "faults:")
				assert.Contains(t, c.Failure.Body, "replay: ")
			}
			assert.Equal(t, tt.fails, fails)
			props := map[string]string{}
			for _, p := range s.Props {
				props[p.Name] = p.Value
			}
			assert.Equal(t, "1", props["campaign_seed"])
		})
	}
}

func TestWriteJSON(t *testing.T) {
	found, clean := smallCampaigns(t)
	dir := t.TempDir()
	require.NoError(t, WriteFindings(prepareDir(t, dir), builtin(t, "redlock-clock-jump"), found))
	var b bytes.Buffer
	require.NoError(t, WriteJSON(&b, found))
	var j JSONResult
	require.NoError(t, json.Unmarshal(b.Bytes(), &j))
	assert.Equal(t, "redlock-clock-jump", j.Base)
	assert.Equal(t, uint64(1), j.CampaignSeed)
	assert.Equal(t, 100, j.Runs)
	assert.Equal(t, len(found.Findings), j.Found)
	assert.Equal(t, j.Found, j.ByKind["lock-safety"])
	assert.Contains(t, j.SeedFormula, "splitmix64")
	require.Len(t, j.Findings, len(found.Findings))
	written := 0
	for i, f := range j.Findings {
		assert.Equal(t, i+1, f.Number)
		assert.NotEmpty(t, f.Faults)
		if f.File != "" {
			written++
			assert.Equal(t, ReplayCommand(f.File, f.Seed), f.Replay)
		}
	}
	assert.Equal(t, 2, written, "--keep 2")

	b.Reset()
	require.NoError(t, WriteJSON(&b, clean))
	assert.Contains(t, b.String(), `"findings": []`)
	assert.Contains(t, b.String(), `"errors": []`)
}

func TestWriteSummary(t *testing.T) {
	found, clean := smallCampaigns(t)
	require.NoError(t, WriteFindings(prepareDir(t, t.TempDir()), builtin(t, "redlock-clock-jump"), found))
	var b bytes.Buffer
	WriteSummary(&b, found)
	out := b.String()
	assert.Contains(t, out, fmt.Sprintf("found %d violating runs in 100 runs", len(found.Findings)))
	assert.Contains(t, out, fmt.Sprintf("lock-safety: %d runs", len(found.Findings)))
	assert.Contains(t, out, ReplayCommand(found.Findings[0].File, found.Findings[0].Seed))
	if len(found.Findings) > 2 {
		assert.Contains(t, out, "raise --keep")
	}
	b.Reset()
	WriteSummary(&b, clean)
	assert.Contains(t, b.String(), "no violation found in 20 runs")
}

// TestWriteJUnitTime: the JUnit time attributes are the campaign's wall
// time (issue 25: time="0" for a 1.3 s campaign).
func TestWriteJUnitTime(t *testing.T) {
	found, clean := smallCampaigns(t)
	for _, res := range []*Result{found, clean} {
		r := *res
		r.Elapsed = 1300 * time.Millisecond
		var b bytes.Buffer
		require.NoError(t, WriteJUnit(&b, &r))
		assert.Contains(t, b.String(), `<testsuites name="simrun fuzz" tests=`)
		assert.Regexp(t, `<testsuites [^>]*time="1.300"`, b.String())
		assert.Regexp(t, `<testsuite [^>]*time="1.300"`, b.String())
		assert.NotContains(t, b.String(), `time="0"`)
	}
}
