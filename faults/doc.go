// Package faults holds locksim's fault kinds, their triggers and schedules,
// and the random schedule generator used for fuzzing.
//
// A Spec is one fault as a scenario file writes it (SCENARIO_FORMAT.md,
// "Fault kinds" and "Triggers"): a kind with its fields, fired at a true time
// or when an event happens (the Nth time a process emits an event of a
// kind), optionally after a delay. Scenarios validate specs with file and
// line before they build a world; Install checks them again (names, kinds,
// modes, rates) and schedules nothing if any is wrong, then resolves names
// to processes, schedules the faults on a sim.Kernel, and records each
// applied fault in the history (honestly: a pause the kernel ignored is
// recorded as such) so that the checker can name the faults that preceded
// a violation.
//
// faults imports only sim.
package faults
