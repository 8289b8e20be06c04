// Package fuzz explores random fault schedules against a base scenario and
// shrinks the schedules that break a property: the logic behind simrun fuzz
// and simrun shrink, and the Go native fuzz target FuzzSchedules.
//
// A campaign takes a base scenario (its topology, clients and workload),
// replaces its fault schedule with schedules drawn by faults.Generate, runs
// each one and keeps the runs that violate a checked property (Checks).
// Each run is independent: its seed is a function of the campaign seed and
// the run number alone (RunSeed), and both its simulation and its schedule
// derive from that seed, so a campaign finds the same runs on one worker or
// many, and any finding replays with simrun run FILE --seed SEED.
//
// Which properties a campaign checks (DefaultChecks): the base's expect
// block describes the story of its own fault schedule, which fuzzing throws
// away. What carries over is the claim that a property holds: a base that
// expects resource_safety: holds (fenced-baseline) claims that fencing keeps
// the resource safe whatever the lock does, so any schedule that breaks the
// resource is a finding, and lock violations are not. A base that claims
// nothing holds (no expect block, or only violations expected, as in
// redlock-clock-jump) is checked for both safety properties. Liveness is
// checked only on request (--check liveness): random faults break liveness
// all the time (three crashed Redlock masters never come back), so it would
// drown the safety findings.
//
// Shrinking (Shrink) is delta debugging over a scenario's schedule: remove
// chunks of faults, then single faults, then simplify what is left (halve
// pauses, jumps and delays, move faults earlier, round times, drop
// processes from partitions, shorten the run), keeping a change only when
// the run still violates the same property, until no single change does.
//
// Campaigns beyond one process (docs/design/scale.md): Each is the one worker
// pool of simrun fuzz, sweep (Sweep) and matrix (Matrix, whose schedules
// come from the same generator, ScheduleWith), and RunSeed their one seed
// derivation; a Shard runs a contiguous range of a campaign's run numbers
// with their whole-campaign seeds, records its identity and results in a
// Manifest (campaign.json), and CheckSet and MergeFuzz join the shards
// into the whole campaign's result. After shrinking, Groups gathers the
// findings by Signature (the fault kinds and targets that remain), up to the
// base's interchangeable processes (Symmetry).
//
// Simplification: a campaign keeps every finding in memory and writes files
// and shrinks only the first Config.Keep findings of each kind; a very long
// campaign that finds thousands of violations reports all of them but
// writes only those.
//
// fuzz imports faults, scenarios, checker and sim; cmd/simrun and package
// usercode (fuzzing against user code, with ShrinkOptions.Run) import it.
package fuzz
