package launch

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql" // the "mysql" database/sql driver
)

// MariaDB's programs, looked up on PATH and then in /usr/sbin, where
// Debian's mariadb-server puts mariadbd.
const (
	MariaDBServerProgram  = "mariadbd"
	MariaDBInstallProgram = "mariadb-install-db"
)

// SQLDriver is go-sql-driver/mysql's database/sql driver name.
const SQLDriver = "mysql"

// MariaDBTable is one lock table: a unique key column "name" (the lock's
// name) and a value column "owner", as nodes/mysql models it.
type MariaDBTable struct {
	Name string
	// KeyName is the unique index's name: "PRIMARY" for a primary key.
	KeyName string
}

// MariaDBOptions configures one mariadbd (Debian's mariadb-server). Zero
// durations and values mean the server's defaults.
type MariaDBOptions struct {
	Name       string // for errors and logs; default "mariadb"
	InstallBin string // default mariadb-install-db
	ServerBin  string // default mariadbd
	IP         string // --bind-address; default 127.0.0.1
	Port       int    // 0: a free port
	Dir        string // required: data directory (Dir/data), socket, pid file and error log

	// Database and Tables are created before Start returns (CREATE
	// DATABASE, CREATE TABLE ... ENGINE=InnoDB), on the first start only:
	// a restart keeps them and their committed rows.
	Database string
	Tables   []MariaDBTable

	LockWaitTimeout     time.Duration // --innodb-lock-wait-timeout, whole seconds
	WaitTimeout         time.Duration // --wait-timeout, whole seconds
	FlushLogAtTrxCommit int           // --innodb-flush-log-at-trx-commit (0, 1, 2); -1: the default
	RollbackOnTimeout   bool          // --innodb-rollback-on-timeout
	NoDeadlockDetect    bool          // --innodb-deadlock-detect=OFF
	SlaveNetTimeout     time.Duration // --slave-net-timeout, whole seconds (0: the default)

	// StartTimeout bounds mariadb-install-db and the wait for the server's
	// handshake (also after Restart); 0 = 60s.
	StartTimeout time.Duration
}

// MariaDBBinaries returns the paths of mariadb-install-db and mariadbd, or
// an error wrapping ErrNoBinary that says how to install them.
func MariaDBBinaries(install, server string) (string, string, error) {
	find := func(bin, def string) (string, error) {
		if bin == "" {
			bin = def
		}
		if p, err := exec.LookPath(bin); err == nil {
			return p, nil
		}
		if p := filepath.Join("/usr/sbin", bin); !strings.Contains(bin, "/") {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
		return "", fmt.Errorf("launch: %s is not installed or not on PATH (Debian: apt-get install -y mariadb-server): %w", bin, ErrNoBinary)
	}
	i, err := find(install, MariaDBInstallProgram)
	if err != nil {
		return "", "", err
	}
	s, err := find(server, MariaDBServerProgram)
	if err != nil {
		return "", "", err
	}
	return i, s, nil
}

// StartMariaDB initialises a data directory in o.Dir with
// mariadb-install-db, starts mariadbd on a loopback port with
// --skip-grant-tables (root without a password; nothing but the test's
// own clients can reach the loopback address), the options' server
// variables and a unix socket in o.Dir, waits for its handshake, and
// creates the lock tables. Restart starts it again on the same data
// directory: InnoDB recovers the committed rows. Shutdown is SIGTERM, its
// clean shutdown.
func StartMariaDB(o MariaDBOptions) (*Server, error) {
	if o.Name == "" {
		o.Name = "mariadb"
	}
	install, bin, err := MariaDBBinaries(o.InstallBin, o.ServerBin)
	if err != nil {
		return nil, err
	}
	if err := placeOptions(o.Name, &o.IP, o.Dir); err != nil {
		return nil, err
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"LockWaitTimeout", o.LockWaitTimeout}, {"WaitTimeout", o.WaitTimeout}, {"SlaveNetTimeout", o.SlaveNetTimeout}} {
		if d.v < 0 || d.v%time.Second != 0 {
			return nil, fmt.Errorf("launch: %s: %s %v: want whole seconds: %w", o.Name, d.name, d.v, ErrBadOption)
		}
	}
	if o.FlushLogAtTrxCommit < -1 || o.FlushLogAtTrxCommit > 2 {
		return nil, fmt.Errorf("launch: %s: FlushLogAtTrxCommit %d: want 0, 1 or 2: %w", o.Name, o.FlushLogAtTrxCommit, ErrBadOption)
	}
	timeout := o.StartTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("launch: %s: Dir: %w", o.Name, err)
	}
	datadir := filepath.Join(o.Dir, "data")
	// A temporary directory of its own: a starting mariadbd (the
	// bootstrap one of mariadb-install-db too) deletes every #sql* file in
	// its tmpdir as left over from an earlier run of itself
	// (mysql_rm_tmp_tables, sql/sql_base.cc), and the default tmpdir is
	// /tmp, shared by every server on the machine. Eight concurrent
	// mariadb-install-db with the shared /tmp failed 4 times in 24 ("Could
	// not remove temporary table: '/tmp/#sql-temptable-...'", "Unknown
	// table 'mysql.tmp_user_sys'"), as the twin suite's and nodes/mysql's
	// servers did when they started together; with their own, none did.
	tmpdir := filepath.Join(o.Dir, "tmp")
	if err := os.MkdirAll(tmpdir, 0o755); err != nil {
		return nil, fmt.Errorf("launch: %s: Dir: %w", o.Name, err)
	}
	args := []string{"--no-defaults", "--auth-root-authentication-method=normal", "--datadir=" + datadir,
		"--tmpdir=" + tmpdir, "--skip-test-db", "--innodb-log-file-size=8M"}
	if os.Geteuid() == 0 {
		args = append(args, "--user=root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, install, args...)
	// As every server (Server.start): its own group, and killed if this
	// process dies before it ends; working in the data directory, where the
	// next start looks for what a killed run left (realmode CleanStale).
	cmd.Dir = o.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("launch: %s: %s: %v:\n%s", o.Name, install, err, tail(string(out)))
	}
	s := &Server{name: o.Name, bin: bin, dir: o.Dir, ip: o.IP, port: o.Port, timeout: timeout,
		ready: mariadbReady, term: terminate, logs: []string{"error.log"}}
	err = s.firstStartArgs(func() ([]string, error) {
		a := []string{"--no-defaults", "--datadir=" + datadir, "--tmpdir=" + tmpdir, "--socket=" + filepath.Join(o.Dir, "mysqld.sock"),
			"--port=" + strconv.Itoa(s.port), "--bind-address=" + s.ip, "--skip-grant-tables", "--skip-name-resolve",
			"--pid-file=" + filepath.Join(o.Dir, "mysqld.pid"), "--log-error=" + filepath.Join(o.Dir, "error.log"),
			"--innodb-buffer-pool-size=16M", "--innodb-log-file-size=8M"}
		if o.LockWaitTimeout > 0 {
			a = append(a, "--innodb-lock-wait-timeout="+strconv.FormatInt(int64(o.LockWaitTimeout/time.Second), 10))
		}
		if o.WaitTimeout > 0 {
			a = append(a, "--wait-timeout="+strconv.FormatInt(int64(o.WaitTimeout/time.Second), 10))
		}
		if o.FlushLogAtTrxCommit >= 0 {
			a = append(a, "--innodb-flush-log-at-trx-commit="+strconv.Itoa(o.FlushLogAtTrxCommit))
		}
		if o.RollbackOnTimeout {
			a = append(a, "--innodb-rollback-on-timeout")
		}
		if o.NoDeadlockDetect {
			a = append(a, "--innodb-deadlock-detect=OFF")
		}
		if o.SlaveNetTimeout > 0 {
			a = append(a, "--slave-net-timeout="+strconv.FormatInt(int64(o.SlaveNetTimeout/time.Second), 10))
		}
		if os.Geteuid() == 0 {
			a = append(a, "--user=root")
		}
		return a, nil
	})
	if err != nil {
		return s, err
	}
	if o.Database == "" {
		return s, nil
	}
	if err := createTables(s.Addr(), o.Database, o.Tables, timeout); err != nil {
		return s, fmt.Errorf("launch: %s: creating the lock tables: %w", o.Name, err)
	}
	return s, nil
}

// createTables creates the database and its lock tables.
func createTables(addr, database string, tables []MariaDBTable, timeout time.Duration) error {
	db, err := sql.Open(SQLDriver, "root@tcp("+addr+")/?timeout="+timeout.String())
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	stmts := []string{"CREATE DATABASE IF NOT EXISTS `" + database + "`"}
	for _, t := range tables {
		key := "PRIMARY KEY (name)"
		if t.KeyName != "" && t.KeyName != "PRIMARY" {
			key = "UNIQUE KEY `" + t.KeyName + "` (name)"
		}
		stmts = append(stmts, "CREATE TABLE IF NOT EXISTS `"+database+"`.`"+t.Name+"` (name VARCHAR(64) NOT NULL, owner VARCHAR(64), "+key+") ENGINE=InnoDB")
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// mariadbReady reads the server's first packet on a fresh connection: a
// handshake (protocol version 10) once the server accepts clients.
func mariadbReady(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	var hdr [5]byte
	if _, err := io.ReadFull(c, hdr[:]); err != nil {
		return err
	}
	// A packet: 3 bytes of length, a sequence byte, then the payload,
	// whose first byte is the protocol version (10) for a handshake and
	// 0xff for an error packet (client/server protocol,
	// "Initial Handshake Packet").
	if n := binary.LittleEndian.Uint32(append(hdr[:3:3], 0)); n == 0 || hdr[4] != 10 {
		return fmt.Errorf("mariadbd did not send a handshake (first byte %#x)", hdr[4])
	}
	return nil
}

// tail returns mariadb-install-db's error lines and the last lines of its
// output (its closing advice alone does not say what failed).
func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var errs []string
	for _, l := range lines {
		if strings.Contains(l, "ERROR") && len(errs) < 5 {
			errs = append(errs, l)
		}
	}
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(append(errs, lines...), "\n")
}
