package checker

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/sim"
)

// shortHolds is a throwaway property: no belief period lasted longer than
// 5s. It exists in this test only, registered with one call.
type shortHolds struct{}

func (shortHolds) About() About {
	return About{Name: "short_holds", Title: "short holds", Kind: "short-holds", Short: "short",
		Explains: "no client believed it held a lock for more than 5s", Expect: []Verdict{Holds, Violated}}
}

func (shortHolds) Judge(h *sim.History, _ Options) Judgement {
	j := Judgement{Verdict: Holds}
	for _, b := range h.Beliefs {
		if d := beliefEnd(b, h.End).Sub(b.Start); d > 5*time.Second {
			j.Verdict = Violated
			j.Violations = append(j.Violations, Violation{Kind: "short-holds", Lock: b.Lock, Clients: []string{b.Client},
				Explanation: fmt.Sprintf("%s held %q for %s", b.Client, b.Lock, d)})
		}
	}
	return j
}

func (p shortHolds) Stream(Options) PieceJudge { return &shortPieces{} }

type shortPieces struct{ pieces int }

func (s *shortPieces) Piece(p *sim.History) (bool, string) {
	s.pieces++
	if (shortHolds{}).Judge(p, Options{}).Verdict != Holds {
		return false, "short holds violated"
	}
	return true, ""
}

func (s *shortPieces) Final(*sim.History) Judgement {
	return Judgement{Verdict: Holds, Violations: nil}
}

func TestRegisteredPropertyIsJudged(t *testing.T) {
	short := history(s(30), []sim.Belief{bel("c1", s(1), s(1), s(2)), bel("c2", s(11), s(11), s(12))}, nil)
	long := history(s(30), []sim.Belief{bel("c1", s(1), s(1), s(2)), bel("c2", s(11), s(11), s(19))}, nil)

	before := Check(short, Options{})
	require.Equal(t, Names(), []string{LockSafety, ResourceSafety, Liveness, TokenOrder}, "the built-in registry, in output order")
	assert.Equal(t, "", string(before.Verdicts.Of("short_holds")))

	t.Cleanup(Register(shortHolds{}))
	p, ok := Lookup("short_holds")
	require.True(t, ok)
	assert.Equal(t, "short holds", p.About().Title)

	// Whole: its verdict comes last, its violations after the others'.
	r := Check(long, Options{})
	require.Len(t, r.Verdicts, 5)
	assert.Equal(t, Judged{"short_holds", Violated}, r.Verdicts[4])
	require.NotEmpty(t, r.Violations)
	assert.Equal(t, `c2 held "L" for 8s`, r.Violations[len(r.Violations)-1].Explanation)
	assert.Equal(t, Holds, Check(short, Options{}).Verdicts.Of("short_holds"))

	// In pieces, forgotten as they come: its PieceJudge judges each piece
	// and gives the final verdict; a piece it finds dirty asks for the
	// whole history with its words.
	got, whole, err := streamOf(Options{}, 0, cutAt(short, s(10)))
	require.NoError(t, err)
	assert.Nil(t, whole, "the pieces were forgotten")
	assert.Equal(t, Holds, got.Verdicts.Of("short_holds"))
	_, _, err = streamOf(Options{}, 0, cutAt(long, s(10)))
	var nw *NeedWhole
	require.True(t, errors.As(err, &nw), "%v", err)
	assert.Contains(t, nw.Why, "short holds violated")

	// Its JSON key comes after the built-in ones.
	b, err := json.Marshal(r.Verdicts)
	require.NoError(t, err)
	assert.JSONEq(t, `{"lock_safety":"holds","resource_safety":"not-used","liveness":"not-judged","token_order":"not-used","short_holds":"violated"}`, string(b))
	assert.Regexp(t, `"token_order":"not-used","short_holds":"violated"}$`, string(b))
}

func TestRegisterRefusesClashes(t *testing.T) {
	for _, a := range []About{
		{Name: LockSafety, Title: "x", Kind: "x", Short: "x", Expect: []Verdict{Holds}},
		{Name: "x", Title: "liveness", Kind: "y", Short: "y", Expect: []Verdict{Holds}},
		{Name: "x", Title: "x", Kind: KindTokenOrder, Short: "z", Expect: []Verdict{Holds}},
		{Name: "x", Title: "x", Kind: "x", Short: "lock", Expect: []Verdict{Holds}},
		{Name: "x", Title: "x", Kind: "x", Short: "x"},
		{Title: "x", Kind: "x", Short: "x", Expect: []Verdict{Holds}},
	} {
		assert.Panics(t, func() { Register(fixed{a}) }, "%+v", a)
	}
	assert.Len(t, Properties(), 4, "a refused property is not registered")
}

// fixed is a property that only has words.
type fixed struct{ a About }

func (f fixed) About() About                        { return f.a }
func (fixed) Judge(*sim.History, Options) Judgement { return Judgement{Verdict: Holds} }
func (fixed) Stream(Options) PieceJudge             { return nil }

func TestVerdictsJSON(t *testing.T) {
	vs := VerdictsFrom(map[string]Verdict{TokenOrder: NotUsed, "zz_later": Holds, LockSafety: Violated, "aa_later": Unknown})
	assert.Equal(t, Verdicts{{LockSafety, Violated}, {TokenOrder, NotUsed}, {"aa_later", Unknown}, {"zz_later", Holds}}, vs,
		"registry order first, then the other names sorted")
	b, err := json.Marshal(vs)
	require.NoError(t, err)
	assert.Equal(t, `{"lock_safety":"violated","token_order":"not-used","aa_later":"unknown","zz_later":"holds"}`, string(b))
	var back Verdicts
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, vs, back)

	type rec struct {
		Seed       int      `json:"seed"`
		Violations []string `json:"violations"`
	}
	two := Verdicts{{LockSafety, Holds}, {Liveness, NotJudged}}
	for _, tt := range []struct {
		name, before, want string
	}{
		{"before a key", "violations", `{"seed":1,"lock_safety":"holds","liveness":"not-judged","violations":["v"]}`},
		{"before the first key", "seed", `{"lock_safety":"holds","liveness":"not-judged","seed":1,"violations":["v"]}`},
		{"no such key: at the end", "explanation", `{"seed":1,"violations":["v"],"lock_safety":"holds","liveness":"not-judged"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := FlatJSON(rec{1, []string{"v"}}, two, tt.before)
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(b))
			got, err := ReadFlat(b)
			require.NoError(t, err)
			assert.Equal(t, two, got)
		})
	}
	_, err = FlatJSON([]int{1}, two, "x")
	assert.Error(t, err, "not an object")
}
