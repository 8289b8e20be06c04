package mysql

import (
	"fmt"
	"time"
)

// Table declares one lock table: a table whose rows are identified by a
// unique key (the lock name), as in
//
//	CREATE TABLE locks (name VARCHAR(64) PRIMARY KEY, owner VARCHAR(64)) ENGINE=InnoDB
//
// Only the key and one value column are modelled.
type Table struct {
	// Name is the table's name ("locks").
	Name string
	// KeyName is the name of the unique index in duplicate-key errors:
	// "PRIMARY" for a primary key (MariaDB's text for error 1062 names the
	// index: "Duplicate entry 'a' for key 'PRIMARY'").
	KeyName string
}

// Config configures one simulated MySQL/InnoDB server. Build it from
// DefaultConfig and change what a scenario sets. Every duration is a whole
// number of seconds, as the server variables it stands for are.
type Config struct {
	// Database is the schema that holds the tables; it appears in the text of
	// error 1146 ("Table 'locksim.x' doesn't exist").
	Database string
	// Tables are the lock tables. A statement on any other table fails with
	// error 1146.
	Tables []Table
	// LockWaitTimeout is innodb_lock_wait_timeout, the session default: how
	// long a statement waits for a row lock before error 1205. A value of
	// InfiniteLockWait or more never times out (MariaDB 10.6 and later).
	LockWaitTimeout time.Duration
	// RollbackOnTimeout is innodb_rollback_on_timeout: when false only the
	// waiting statement is rolled back by error 1205; when true the whole
	// transaction is.
	RollbackOnTimeout bool
	// DeadlockDetect is innodb_deadlock_detect: when false a deadlock is
	// broken only by lock wait timeouts.
	DeadlockDetect bool
	// WaitTimeout is wait_timeout, the session default: the server closes a
	// connection idle (between statements) for this long, rolling back its
	// open transaction.
	WaitTimeout time.Duration
	// FlushLogAtTrxCommit is innodb_flush_log_at_trx_commit: 1 writes and
	// flushes the redo log at every commit; 2 writes at commit and flushes
	// once a second; 0 writes and flushes once a second.
	FlushLogAtTrxCommit int
	// ReplicaOf is the process name of this server's replication source
	// (CHANGE MASTER TO ...; START SLAVE); "" makes it a primary. A Promote
	// persisted on the node's disk overrides it after a restart.
	ReplicaOf string
	// ReadOnly is read_only: INSERT, UPDATE and DELETE fail with error 1290.
	// Promote turns it off.
	ReadOnly bool
	// SlaveNetTimeout is slave_net_timeout: a replica that heard nothing
	// from its source for this long reconnects. The source sends heartbeats
	// every SlaveNetTimeout/2 (MASTER_HEARTBEAT_PERIOD's default).
	SlaveNetTimeout time.Duration
}

// InfiniteLockWait is the innodb_lock_wait_timeout value that means "wait
// forever" in MariaDB 10.6 and later, and its maximum (MariaDB docs,
// system variable innodb_lock_wait_timeout: "The value 100000000 is infinite
// timeout"; maximum value 100000000).
const InfiniteLockWait = 100000000 * time.Second

// MaxWaitTimeout is wait_timeout's maximum on Linux, 31536000 s (MySQL
// manual, server-system-variables.html#sysvar_wait_timeout; MariaDB the
// same).
const MaxWaitTimeout = 31536000 * time.Second

// DefaultConfig returns a stock MariaDB 10.11 / MySQL 8 server with one lock
// table "locks" keyed by PRIMARY in schema "locksim" (the table is the
// model's, the rest are the servers' defaults, checked against mariadbd
// 10.11.19 by the conformance suite: SELECT @@wait_timeout,
// @@innodb_lock_wait_timeout, ...).
func DefaultConfig() Config {
	return Config{
		Database: "locksim",
		Tables:   []Table{{Name: "locks", KeyName: "PRIMARY"}},
		// innodb_lock_wait_timeout default 50 (MySQL manual
		// innodb-parameters.html#sysvar_innodb_lock_wait_timeout; MariaDB
		// docs the same).
		LockWaitTimeout: 50 * time.Second,
		// innodb_rollback_on_timeout default OFF (same manual page).
		RollbackOnTimeout: false,
		// innodb_deadlock_detect default ON (MySQL manual
		// innodb-parameters.html#sysvar_innodb_deadlock_detect).
		DeadlockDetect: true,
		// wait_timeout default 28800 (MySQL manual
		// server-system-variables.html#sysvar_wait_timeout).
		WaitTimeout: 28800 * time.Second,
		// innodb_flush_log_at_trx_commit default 1 (MySQL manual
		// innodb-parameters.html#sysvar_innodb_flush_log_at_trx_commit).
		FlushLogAtTrxCommit: 1,
		// read_only default OFF (MySQL manual
		// server-system-variables.html#sysvar_read_only).
		ReadOnly: false,
		// slave_net_timeout default 60 (MySQL manual
		// replication-options-replica.html#sysvar_replica_net_timeout;
		// MariaDB docs, slave_net_timeout, default 60 since 10.2.4).
		SlaveNetTimeout: 60 * time.Second,
	}
}

// Validate reports the first configuration error, naming the field.
func (c Config) Validate() error {
	if !isIdent(c.Database) {
		return fmt.Errorf("mysql: database: %q is not a valid name (letters, digits, _ and $; 1 to 64 characters)", c.Database)
	}
	if len(c.Tables) == 0 {
		return fmt.Errorf("mysql: tables: a MySQL node needs at least one lock table")
	}
	seen := map[string]int{}
	for i, t := range c.Tables {
		if !isIdent(t.Name) {
			return fmt.Errorf("mysql: tables[%d].name: %q is not a valid table name (letters, digits, _ and $; 1 to 64 characters)", i, t.Name)
		}
		if j, dup := seen[t.Name]; dup {
			return fmt.Errorf("mysql: tables[%d].name: %q is already declared by tables[%d]", i, t.Name, j)
		}
		seen[t.Name] = i
		if !isIdent(t.KeyName) {
			return fmt.Errorf("mysql: tables[%d].key_name: %q is not a valid index name (use PRIMARY for a primary key)", i, t.KeyName)
		}
	}
	if err := wholeSeconds("lock_wait_timeout", c.LockWaitTimeout, 0, InfiniteLockWait); err != nil {
		return err
	}
	if err := wholeSeconds("wait_timeout", c.WaitTimeout, time.Second, MaxWaitTimeout); err != nil {
		return err
	}
	if err := wholeSeconds("slave_net_timeout", c.SlaveNetTimeout, 2*time.Second, MaxWaitTimeout); err != nil {
		return err
	}
	switch c.FlushLogAtTrxCommit {
	case 0, 1, 2:
	default:
		return fmt.Errorf("mysql: flush_log_at_trx_commit: %d is not modelled (allowed: 0, 1, 2)", c.FlushLogAtTrxCommit)
	}
	return nil
}

func wholeSeconds(field string, d, lo, hi time.Duration) error {
	if d%time.Second != 0 || d < lo || d > hi {
		return fmt.Errorf("mysql: %s: %v must be a whole number of seconds from %v to %v", field, d, lo, hi)
	}
	return nil
}

// isIdent accepts unquoted MySQL identifiers (MySQL manual, identifiers.html:
// ASCII letters, digits, $ and _, at most 64 characters); the model never
// quotes.
func isIdent(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$') {
			return false
		}
	}
	return true
}
