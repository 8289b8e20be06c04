package scenarios

import (
	"fmt"
	"github.com/locksim/locksim/clients"
	"github.com/locksim/locksim/faults"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/locksim/locksim/nodes/mysql"
	"github.com/locksim/locksim/record"
	"github.com/locksim/locksim/sim"
)

// Process kind and lane role of the mysql kind.
const (
	KindMySQL      = clients.NodeMySQL
	RoleMySQL Role = "mysql"
)

// MySQLSpec is one MySQL/InnoDB server (nodes/mysql).
type MySQLSpec struct {
	Name string
	// Config is the node's configuration as the scenario sets it.
	Config mysql.Config
	Clock  ClockSpec
}

// mysqlFields maps nodes/mysql Config.Validate's field names to the
// scenario's (the server variables' names).
var mysqlFields = map[string]string{
	"lock_wait_timeout":       "innodb_lock_wait_timeout",
	"flush_log_at_trx_commit": "innodb_flush_log_at_trx_commit",
}

// mysqlSection is the kind's top-level field and the key of its parsed section.
const mysqlSection = "mysql"

// mysqlKind: the mysql: list of MySQL/InnoDB servers with their lock
// tables. A lock-table row is durable with innodb_flush_log_at_trx_commit
// = 1; row locks belong to transactions and die with their connection.
var mysqlKind = &ProcKind{
	Name: KindMySQL, Section: mysqlSection, What: "a MySQL server",
	Doc: "MySQL/InnoDB servers (`nodes/mysql`), a list. Each entry:\n\n- `name` (required); `database` (default `locksim`).\n- `tables`: the lock tables, names or `{name, key_name}`; at least one (default `[locks]` keyed by `PRIMARY`).\n- `innodb_lock_wait_timeout`, `wait_timeout`, `slave_net_timeout` (whole seconds; defaults 50s, 28800s, 60s).\n- `innodb_flush_log_at_trx_commit` (0, 1, 2; default 1), `innodb_rollback_on_timeout` (false), `innodb_deadlock_detect` (true), `read_only` (false).\n- `replica_of`: another `mysql` server.\n- `clock`.",
	// nodes/mysql logs mysql-row-locked when InnoDB grants a row lock (an
	// INSERT's or DELETE's record lock, SELECT ... FOR UPDATE's),
	// mysql-commit at each commit and mysql-conn-closed when the server
	// ends a session (wait_timeout, KILL, a client that hung up).
	TriggerEvents: []faults.NodeEvent{
		{Name: "row-locked", Trace: mysql.KindRowLocked, Means: "InnoDB granted a row lock (INSERT, DELETE, SELECT ... FOR UPDATE)"},
		{Name: "committed", Trace: mysql.KindCommit, Means: "a transaction committed"},
		{Name: "conn-closed", Trace: mysql.KindConnClosed, Means: "the server ended a session (wait_timeout, KILL, a client that hung up)"},
	},
	LockServer: true,
	read: func(r *reader, top *obj, s *Scenario) {
		var out []MySQLSpec
		for i, n := range top.list(mysqlSection) {
			out = append(out, r.mysql(n, fmt.Sprintf("mysql[%d]", i)))
		}
		if len(out) > 0 {
			setSection(s, mysqlSection, out)
		}
	},
	procs: func(s *Scenario) []Proc {
		var out []Proc
		for i, m := range s.MySQL() {
			var tables []string
			for _, t := range m.Config.Tables {
				tables = append(tables, t.Name)
			}
			note := "mysql, tables " + strings.Join(tables, ", ")
			if m.Config.ReplicaOf != "" {
				note = "mysql, replica of " + m.Config.ReplicaOf
			}
			out = append(out, Proc{Name: m.Name, Path: fmt.Sprintf("mysql[%d].name", i), Clock: m.Clock, Role: RoleMySQL, Lane: record.LaneRows, Note: note, ReplicaOf: m.Config.ReplicaOf})
		}
		return out
	},
	check: func(x *xref, s *Scenario) {
		for i, m := range s.MySQL() {
			if m.Config.ReplicaOf == "" {
				continue
			}
			path := fmt.Sprintf("mysql[%d].replica_of", i)
			if x.ref(path, m.Config.ReplicaOf, KindMySQL) && m.Config.ReplicaOf == m.Name {
				x.r.errf(x.at(path), path, "a server cannot replicate itself")
			}
		}
	},
	build: func(b *builder) error {
		for _, m := range b.s.MySQL() {
			cfg := m.Config
			if err := cfg.Validate(); err != nil {
				return fmt.Errorf("mysql %s: %w", m.Name, err)
			}
			if err := b.add(m.Name, m.Clock, func() sim.Process { return mysql.New(cfg) }); err != nil {
				return err
			}
		}
		return nil
	},
}

// MySQL returns the scenario's MySQL servers, in file order.
func (s *Scenario) MySQL() []MySQLSpec { return sectionOf[[]MySQLSpec](s, mysqlSection) }

func (r *reader) mysql(n *yaml.Node, path string) MySQLSpec {
	s := MySQLSpec{Config: mysql.DefaultConfig()}
	c := &s.Config
	o := r.mapping(n, path)
	o.str("name", &s.Name)
	o.str("database", &c.Database)
	if tn := o.get("tables"); tn != nil {
		c.Tables = nil
		if tn.Kind != yaml.SequenceNode {
			r.errf(tn, path+".tables", "must be a list of lock tables like [locks] or [{name: locks, key_name: PRIMARY}], got %s", describe(tn))
		}
		for i, e := range tn.Content {
			if tn.Kind != yaml.SequenceNode {
				break
			}
			tp := fmt.Sprintf("%s.tables[%d]", path, i)
			t := mysql.Table{KeyName: "PRIMARY"}
			if e.Kind == yaml.ScalarNode {
				t.Name = e.Value
			} else {
				to := r.mapping(e, tp)
				if !to.str("name", &t.Name) {
					r.errf(e, tp+".name", "required field is missing (the lock table's name)")
				}
				to.str("key_name", &t.KeyName)
				to.done()
			}
			c.Tables = append(c.Tables, t)
		}
	}
	seconds := func(key string, dst *time.Duration) {
		if o.duration(key, dst) && (*dst%time.Second != 0 || *dst < 0) {
			r.errf(o.get(key), path+"."+key, "must be a whole number of seconds (a server variable in seconds), got %v", *dst)
		}
	}
	seconds("innodb_lock_wait_timeout", &c.LockWaitTimeout)
	o.boolean("innodb_rollback_on_timeout", &c.RollbackOnTimeout)
	o.boolean("innodb_deadlock_detect", &c.DeadlockDetect)
	seconds("wait_timeout", &c.WaitTimeout)
	o.integer("innodb_flush_log_at_trx_commit", &c.FlushLogAtTrxCommit)
	o.str("replica_of", &c.ReplicaOf)
	o.boolean("read_only", &c.ReadOnly)
	seconds("slave_net_timeout", &c.SlaveNetTimeout)
	s.Clock = r.clock(o, path)
	o.done()
	if len(r.errs) == 0 {
		if err := c.Validate(); err != nil {
			// "mysql: FIELD: message": name the scenario's field and its line.
			msg := strings.TrimPrefix(err.Error(), "mysql: ")
			field, rest, ok := strings.Cut(msg, ": ")
			if !ok {
				field, rest = "", msg
			}
			if f, renamed := mysqlFields[field]; renamed {
				field = f
			}
			fp := path
			if field != "" {
				fp = path + "." + field
			}
			at := find(n, field)
			if at == nil {
				at = n
			}
			r.errf(at, fp, "%s", rest)
		}
	}
	return s
}
