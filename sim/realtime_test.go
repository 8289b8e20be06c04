package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder remembers what it receives and when.
type recorder struct {
	got []string
	at  []Time
	env *Env
}

func (r *recorder) Init(env *Env) { r.env = env }
func (r *recorder) Receive(env *Env, from ProcID, m Message) {
	r.got = append(r.got, env.NameOf(from)+":"+m.(string))
	r.at = append(r.at, env.k.Now())
}
func (r *recorder) Fire(env *Env, tag any) { env.Send(0, "tick") }

func TestNextAt(t *testing.T) {
	k := New(Config{Seed: 1})
	_, ok := k.NextAt()
	assert.False(t, ok, "an empty queue has no next event")
	rec := &recorder{}
	k.Add("a", func() Process { return rec }, ClockSpec{})
	at, ok := k.NextAt()
	require.True(t, ok)
	assert.Equal(t, Time(0), at, "the start of a is queued at 0")
	require.NoError(t, k.Run(0))
	rec.env.After(Mono, 5_000, nil)
	at, ok = k.NextAt()
	require.True(t, ok)
	assert.Equal(t, Time(5_000), at, "the timer is the next event")
}

func TestInjectDeliversAtTheCurrentTime(t *testing.T) {
	tests := []struct {
		name    string
		crashed bool
		want    []string
	}{
		{name: "delivered", want: []string{"gw:reply"}},
		{name: "destination crashed", crashed: true, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := New(Config{Seed: 1, KeepTrace: true})
			rec := &recorder{}
			c := k.Add("c", func() Process { return rec }, ClockSpec{})
			gw := k.Add("gw", func() Process { return &recorder{} }, ClockSpec{})
			require.NoError(t, k.Run(7_000))
			if tt.crashed {
				k.Crash(c, CrashProcess)
			}
			k.Inject(gw, c, "reply")
			require.NoError(t, k.Run(7_000))
			assert.Equal(t, tt.want, rec.got)
			if tt.want != nil {
				assert.Equal(t, []Time{7_000}, rec.at, "zero latency: delivered at the injection time")
			}
			tr := k.Trace()
			var sends int
			for _, e := range tr {
				if e.Kind == KindSend && e.Proc == "gw" {
					sends++
				}
			}
			assert.Equal(t, 1, sends, "the injection is traced as gw's send")
		})
	}
}
