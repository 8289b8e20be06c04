package storage

import (
	"fmt"
	"strings"
)

// Fencing modes (SCENARIO_FORMAT.md, "Resource fencing modes").
const (
	// FencingNone accepts every read and write.
	FencingNone = "none"
	// FencingMonotonic rejects a write whose token is lower than the highest
	// token seen on a write (Kleppmann 2016).
	FencingMonotonic = "monotonic"
	// FencingMark rejects any read or write whose token is lower than the
	// highest token seen on any operation; reads raise the mark (Junqueira
	// 2016).
	FencingMark = "mark"
	// FencingTokenCAS accepts a write only if the resource's current-lock
	// field, set by SetLockReq, still holds the writer's LockValue (antirez
	// 2016, check-and-set).
	FencingTokenCAS = "token-cas"
)

// Modes lists the fencing modes in the order the documentation gives them.
var Modes = []string{FencingNone, FencingMonotonic, FencingMark, FencingTokenCAS}

// Config configures a storage node.
type Config struct {
	// Fencing is the fencing mode: one of Modes.
	Fencing string
}

// DefaultConfig returns the configuration of an unprotected resource: the
// articles' starting point, where nothing but the lock guards the resource
// (SCENARIO_FORMAT.md: "fencing: none" is the default).
func DefaultConfig() Config {
	return Config{Fencing: FencingNone}
}

// Validate reports a configuration error: an unknown fencing mode.
func (c Config) Validate() error {
	for _, m := range Modes {
		if c.Fencing == m {
			return nil
		}
	}
	return fmt.Errorf("storage: fencing: unknown mode %q (allowed: %s)", c.Fencing, strings.Join(Modes, ", "))
}
