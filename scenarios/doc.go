// Package scenarios holds locksim's scenario format, its validation, the
// built-in catalogue and the code that builds a scenario into a world and
// runs it.
//
// A scenario is a YAML file (../shared/SCENARIO_FORMAT.md, with the
// extensions docs/guide/scenarios.md lists): servers, lock clients with their workload,
// the protected resource, a fault schedule and the expected verdicts.
// Parsing is strict: unknown fields, unknown or misplaced process names,
// impossible values and triggers that can never fire are errors naming the
// file, the line and the field. The built-in catalogue (catalogue/*.yaml,
// embedded) uses the same format; each entry cites its source and says why
// its verdict follows from the model.
//
// Build turns a scenario into processes on a sim.Kernel in a fixed order
// (Redis servers, sentinels, ZooKeeper, storage, clients, a hidden operator
// process), installs the fault schedule and computes each client's liveness
// bound; Run simulates it and hands the history to the checker. Sweeps,
// fuzzing and shrinking change a scenario by editing its YAML tree (edit.go)
// and parsing it again, so every variant is validated like a user's file.
//
// scenarios may import sim, nodes/..., clients, faults and checker; nothing
// but cmd imports it.
package scenarios
