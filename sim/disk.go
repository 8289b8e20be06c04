package sim

import (
	"sort"
	"time"
)

// Writeback is how long written but unsynced data may stay in the OS page
// cache before the kernel writes it back on its own: Linux's
// vm.dirty_expire_centisecs default of 3000 (Documentation/admin-guide/sysctl/vm.rst).
// The redis.conf comment on appendfsync no says the same ("Normally Linux will
// flush data every 30 seconds"). NB: the flusher thread wakes every 5 s
// (dirty_writeback_centisecs), so real data may stay dirty up to ~35 s; the
// model uses the 30 s expiry alone.
const Writeback = 30 * time.Second

// CrashMode says what a crash destroys.
type CrashMode uint8

const (
	// CrashProcess kills the process (kill -9, a segfault): its memory is
	// gone, but what it wrote reached the OS page cache and survives.
	CrashProcess CrashMode = iota
	// CrashPower loses power (or panics the kernel): only what was fsynced,
	// or written back by the OS, survives.
	CrashPower
	// CrashClean is a clean shutdown: the process's Shutdown hook runs first
	// (if it has one) and everything written is then made durable.
	CrashClean
)

func (m CrashMode) String() string {
	switch m {
	case CrashPower:
		return "power"
	case CrashClean:
		return "clean"
	}
	return "process"
}

// Disk is a process's durable storage model: named files of records. It
// belongs to the machine, not to a process instance, so it survives a crash
// and the restarted instance reads it. Records are opaque values the process
// chooses; the disk only tracks which of them are durable.
type Disk struct {
	k     *Kernel
	files map[string]*File
}

// File is one file on a Disk: records appended in order, a prefix of which
// is durable.
type File struct {
	k       *Kernel
	name    string
	records []any
	written []Time // true time each record reached the page cache
	synced  int    // records[:synced] are on stable storage
}

// File returns the named file, creating it empty if needed.
func (d *Disk) File(name string) *File {
	if d.files == nil {
		d.files = map[string]*File{}
	}
	f := d.files[name]
	if f == nil {
		f = &File{k: d.k, name: name}
		d.files[name] = f
	}
	return f
}

// Names returns the names of the files on the disk, sorted.
func (d *Disk) Names() []string {
	out := make([]string, 0, len(d.files))
	for n := range d.files {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Append writes rec to the file (write(2): it reaches the page cache, not yet
// stable storage).
func (f *File) Append(rec any) {
	f.records = append(f.records, rec)
	f.written = append(f.written, f.k.now)
}

// Sync makes everything written so far durable (fsync(2)).
func (f *File) Sync() { f.synced = len(f.records) }

// Replace atomically replaces the file's content with recs and makes it
// durable, as a snapshot written to a temporary file, fsynced and renamed
// over the old one (Redis' rdbSave does exactly this).
func (f *File) Replace(recs []any) {
	now := f.k.now
	f.records = append(f.records[:0:0], recs...)
	f.written = make([]Time, len(recs))
	for i := range f.written {
		f.written[i] = now
	}
	f.synced = len(recs)
}

// Rewrite replaces the file's content with the one record rec and makes it
// durable, as Replace([]any{rec}) does, reusing the file's memory: for a
// model that writes and fsyncs its whole state on every change, whose file
// would otherwise grow by a record per change (the storage node; issue 15).
func (f *File) Rewrite(rec any) {
	f.records = append(f.records[:0], rec)
	f.written = append(f.written[:0], f.k.now)
	f.synced = 1
}

// Records returns the file's current content as the OS would read it (page
// cache included). The slice must not be modified.
func (f *File) Records() []any { return f.records }

// Len returns the number of records in the file.
func (f *File) Len() int { return len(f.records) }

// Synced returns how many records are durable.
func (f *File) Synced() int { return f.synced }

// loseUnsynced applies a power loss at now: records neither fsynced nor
// written back by the OS are lost. Write-back is modelled as in order, so the
// durable part stays a prefix.
func (f *File) loseUnsynced(now Time) {
	keep := f.synced
	for keep < len(f.records) && f.written[keep] <= now-Time(Writeback) {
		keep++
	}
	f.records = f.records[:keep]
	f.written = f.written[:keep]
	f.synced = keep
}

func (d *Disk) crash(mode CrashMode, now Time) {
	for _, n := range d.Names() {
		f := d.files[n]
		switch mode {
		case CrashPower:
			f.loseUnsynced(now)
		case CrashClean:
			f.Sync()
		}
	}
}
