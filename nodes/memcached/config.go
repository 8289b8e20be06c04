package memcached

import (
	"fmt"
)

// Config configures one simulated memcached server. Build it from
// DefaultConfig and change the fields a scenario sets.
type Config struct {
	// MaxBytes is the memory limit for slab pages (-m, given in megabytes
	// on the command line): a slab class gets a new 1 MB page only while
	// the pages handed out stay within it, except that every class gets
	// its first page (see the package doc).
	MaxBytes int64
	// ItemSizeMax is the largest item (header, key and value) the server
	// accepts (-I); a larger one is refused with "SERVER_ERROR object too
	// large for cache".
	ItemSizeMax int64
	// EvictToFree is true unless -M is given: when memory is full the LRU
	// tail is evicted; with -M the store fails with "SERVER_ERROR out of
	// memory storing object" instead.
	EvictToFree bool
	// UseCAS is true unless -C is given: items carry an 8-byte CAS id.
	UseCAS bool
}

// Defaults and limits of memcached (M 1.6.45 memcached.c settings_init).
const (
	// DefaultMaxBytes: settings.maxbytes = 64 MB (memcached.c:224).
	DefaultMaxBytes = 64 * 1024 * 1024
	// DefaultItemSizeMax: settings.item_size_max = 1 MB, "the famous 1MB
	// upper limit" (memcached.c:240).
	DefaultItemSizeMax = 1024 * 1024
	// KeyMaxLength: KEY_MAX_LENGTH 250 (memcached.h:71).
	KeyMaxLength = 250
	// RealtimeMaxDelta: REALTIME_MAXDELTA 60*60*24*30, the largest exptime
	// taken as relative seconds; larger values are absolute Unix times
	// (memcached.h:1060).
	RealtimeMaxDelta = 60 * 60 * 24 * 30
	// ItemUpdateInterval: ITEM_UPDATE_INTERVAL 60 (memcached.h:109); the
	// server's clock starts at ITEM_UPDATE_INTERVAL+2 seconds
	// (memcached.c:203, :6108).
	ItemUpdateInterval = 60
	// ItemHeaderSize: sizeof(struct _stritem) on a 64-bit build: three
	// pointers, two rel_time_t, an int, a short, a uint16 and two uint8
	// (memcached.h:613-636) = 48 bytes.
	ItemHeaderSize = 48
)

// DefaultConfig returns the configuration of a stock memcached 1.6.
func DefaultConfig() Config {
	return Config{
		MaxBytes:    DefaultMaxBytes,
		ItemSizeMax: DefaultItemSizeMax,
		// settings.evict_to_free = 1; -M sets it to 0 (memcached.c:228, :5043-5044).
		EvictToFree: true,
		// settings.use_cas = true; -C turns it off (memcached.c settings_init).
		UseCAS: true,
	}
}

// Validate reports the first bad field, naming it and what is allowed.
func (c Config) Validate() error {
	// memcached's -I accepts 1 KB and up, but refuses to start when it is
	// below slab_chunk_max (512 KB unless -o slab_chunk_max changes it:
	// "slab_chunk_max (bytes: 524288) cannot be larger than -I
	// (item_size_max 1024)", M 1.6.45 memcached.c main's option checks;
	// found by real mode); a value above 1 MB also grows the slab page
	// size. The model keeps the default chunk maximum and 1 MB pages, so
	// it accepts 512 KB to 1 MB.
	if c.ItemSizeMax < SlabChunkMax || c.ItemSizeMax > SlabPageSize {
		return fmt.Errorf("memcached config: ItemSizeMax: %d out of range (allowed: %d..%d bytes)", c.ItemSizeMax, SlabChunkMax, SlabPageSize)
	}
	if c.MaxBytes <= 0 {
		return fmt.Errorf("memcached config: MaxBytes: %d out of range (allowed: more than 0 bytes; memcached's -m is in megabytes)", c.MaxBytes)
	}
	// memcached refuses to start when -I exceeds half of -m ("Cannot set
	// item size limit higher than 1/2 of memory max.", exit EX_USAGE; M
	// 1.6.45 memcached.c main's option checks; found by real mode, whose
	// memcached -m 1 did not start with the default -I 1m).
	if c.ItemSizeMax > c.MaxBytes/2 {
		return fmt.Errorf("memcached config: ItemSizeMax: %d is more than half of MaxBytes (%d), which memcached refuses at start-up", c.ItemSizeMax, c.MaxBytes)
	}
	return nil
}

// ItemSize is the number of bytes the model accounts for one item, as
// memcached sizes it before choosing a slab class: item_make_header gives
// sizeof(item) + (nkey+1) + 4 bytes of client flags when they are non-zero
// + nbytes (the value and its trailing "\r\n"), plus 8 bytes of CAS id when
// CAS is on (M 1.6.45 items.c:152-160, :258-261; ITEM_ntotal,
// memcached.h:149).
func (c Config) ItemSize(key string, flags uint32, valueLen int) int64 {
	n := int64(ItemHeaderSize) + int64(len(key)) + 1 + int64(valueLen) + 2
	if flags != 0 {
		n += 4
	}
	if c.UseCAS {
		n += 8
	}
	return n
}
