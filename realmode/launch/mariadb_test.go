package launch

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locksim/locksim/internal/simtest"
)

// TestMariaDBLifecycle: mariadbd starts on its loopback address with the
// lock tables created and the options' server variables; a kill and a
// restart keep a committed row (innodb_flush_log_at_trx_commit 1); Shutdown
// is SIGTERM; Stop leaves no process.
func TestMariaDBLifecycle(t *testing.T) {
	if _, _, err := MariaDBBinaries("", ""); err != nil {
		simtest.NeedBinaries(t, "the MariaDB launch test", "apt-get install -y mariadb-server", MariaDBInstallProgram, MariaDBServerProgram)
	}
	g := group(t)
	ip := nextIP(t, NewAddrPool())
	s, err := g.StartMariaDB(MariaDBOptions{Name: "D", IP: ip, Dir: serverDir(t, g), Database: "locksim",
		Tables:          []MariaDBTable{{Name: "locks", KeyName: "PRIMARY"}, {Name: "leases", KeyName: "lease_name"}},
		LockWaitTimeout: 7 * time.Second, WaitTimeout: 9 * time.Second, FlushLogAtTrxCommit: 1})
	require.NoError(t, err)
	assert.Equal(t, ip, s.IP())
	ctx := context.Background()
	open := func() *sql.DB {
		db, err := sql.Open(SQLDriver, "root@tcp("+s.Addr()+")/locksim")
		require.NoError(t, err)
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	db := open()
	var lwt, wt int
	var tmpdir string
	require.NoError(t, db.QueryRowContext(ctx, "SELECT @@innodb_lock_wait_timeout, @@wait_timeout, @@tmpdir").Scan(&lwt, &wt, &tmpdir))
	assert.Equal(t, 7, lwt)
	assert.Equal(t, 9, wt)
	// Not the shared /tmp: a starting mariadbd deletes every #sql* file
	// there, other servers' temporary tables too.
	assert.True(t, strings.HasPrefix(tmpdir, s.dir+string(filepath.Separator)), "the server's tmpdir %s is under its own directory %s", tmpdir, s.dir)
	_, err = db.ExecContext(ctx, "INSERT INTO locks (name, owner) VALUES ('lock', 'c1')")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO leases (name, owner) VALUES ('l', 'c1')")
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, "INSERT INTO leases (name, owner) VALUES ('l', 'c2')")
	require.ErrorContains(t, err, "Duplicate entry 'l' for key 'lease_name'")

	t.Run("kill and restart keep the committed row", func(t *testing.T) {
		pid := s.PID()
		require.NoError(t, s.Kill())
		assert.False(t, alive(pid))
		require.NoError(t, s.Restart())
		var owner string
		require.NoError(t, open().QueryRowContext(ctx, "SELECT owner FROM locks WHERE name = 'lock'").Scan(&owner))
		assert.Equal(t, "c1", owner)
	})
	t.Run("shutdown is SIGTERM, and stop is final", func(t *testing.T) {
		pid := s.PID()
		require.NoError(t, s.Shutdown())
		assert.False(t, alive(pid))
		require.NoError(t, s.Restart())
		pid = s.PID()
		s.Stop()
		assert.False(t, alive(pid))
		assert.Error(t, s.Restart())
	})
}
