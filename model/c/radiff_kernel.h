/* radiff_kernel.h: the slice of the kernel API that mm/readahead.c, mm/fadvise.c and the fault path's
 * readahead of mm/filemap.c use, written for
 * radiff (not taken from the kernel), so that a tree's own mm/readahead.c compiles as a
 * user-space shared object and runs inside radiff's model (docs/hybrid.md).
 *
 * It is forced in with `gcc -include radiff_kernel.h`; every #include of the kernel file
 * is answered by an empty header. Types and struct fields keep the kernel's names and
 * C types (file_ra_state's `unsigned int size` wraps as the kernel's does). What the
 * kernel keeps elsewhere (the page cache, the bdi, the block layer, the file system)
 * is asked of the model through `struct radiff_ops`: every helper below that needs the
 * model's state finds the call table and the model's opaque context through the
 * address_space it was given (`mapping->radiff`), as the kernel finds its state through
 * the mapping.
 *
 * Nothing here allocates: folios are the model's (`struct folio` lives in memory the
 * model owns for the length of one call from the model into the C).
 *
 * The object has up to seven translation units: mm/readahead.c, which holds radiff's
 * runtime below (the thread's context, the crash guard, the aops); mm/fadvise.c, compiled
 * with RADIFF_UNIT_FADVISE defined; and the functions the harness takes from the tree's
 * mm/filemap.c, fs/f2fs/data.c, fs/ext4/readpage.c, mm/madvise.c and mm/memory.c at run
 * time, compiled with RADIFF_UNIT_FILEMAP, RADIFF_UNIT_F2FS, RADIFF_UNIT_EXT4,
 * RADIFF_UNIT_MADVISE and RADIFF_UNIT_MEMORY defined. The last six only declare the runtime.
 */
#ifndef RADIFF_KERNEL_H
#define RADIFF_KERNEL_H

#if defined(RADIFF_UNIT_FADVISE) || defined(RADIFF_UNIT_FILEMAP) || defined(RADIFF_UNIT_F2FS) || \
	defined(RADIFF_UNIT_EXT4) || defined(RADIFF_UNIT_MADVISE) || defined(RADIFF_UNIT_MEMORY)
#define RADIFF_RUNTIME_ELSEWHERE
#endif

#include <stddef.h>
#include <stdbool.h>

/* ---- types ---- */
typedef unsigned long pgoff_t;
typedef long long loff_t;
typedef unsigned int gfp_t;
typedef long ssize_t;
typedef unsigned int fmode_t;
typedef unsigned short umode_t;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long s64;
typedef int compat_int_t;

/* ---- constants ---- */
#define PAGE_SHIFT 12
#define PAGE_SIZE (1UL << PAGE_SHIFT)
#define PAGE_MASK (~(PAGE_SIZE - 1))
#define ULONG_MAX (~0UL)
#define UINT_MAX (~0U)
/* The model's allocations do not look at the mask (fail_page_alloc is the model's). */
#define GFP_KERNEL 0
#define EINTR 4
#define EIO 5
#define EAGAIN 11
#define ENOMEM 12
#define EFAULT 14
#define EEXIST 17
#define EBADF 9
#define EINVAL 22
#define ESPIPE 29
#define LLONG_MAX 0x7fffffffffffffffLL
#define FMODE_READ ((fmode_t)(1 << 0))
#define FMODE_RANDOM ((fmode_t)(1 << 12))
#define FMODE_NOREUSE ((fmode_t)(1 << 23))
/* include/uapi/linux/fadvise.h on x86-64 */
#define POSIX_FADV_NORMAL 0
#define POSIX_FADV_RANDOM 1
#define POSIX_FADV_SEQUENTIAL 2
#define POSIX_FADV_WILLNEED 3
#define POSIX_FADV_DONTNEED 4
#define POSIX_FADV_NOREUSE 5
#define S_IFMT 00170000
#define S_IFREG 0100000
#define S_IFIFO 0010000
#define S_IFBLK 0060000
#define S_ISREG(m) (((m) & S_IFMT) == S_IFREG)
#define S_ISBLK(m) (((m) & S_IFMT) == S_IFBLK)
#define S_ISFIFO(m) (((m) & S_IFMT) == S_IFIFO)

/* ---- compiler and debugging macros ---- */
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define __always_inline inline __attribute__((always_inline))
#define noinline __attribute__((noinline))
#define __maybe_unused __attribute__((unused))
#define __user
#define __rcu
#define fallthrough __attribute__((__fallthrough__))
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
/* The third (eighth) of the arguments: a helper a tree calls in two shapes, told apart by
 * how many arguments it gets, is RADIFF_THIRD(__VA_ARGS__, two_args, one_arg, other)
 * (RADIFF_EIGHTH for seven or six). */
#define RADIFF_THIRD(a, b, c, ...) c
#define RADIFF_EIGHTH(a, b, c, d, e, f, g, h, ...) h
/* A kernel BUG is the C's own crash: radiff_bug() tells the model which line. */
#define BUG() radiff_bug(__FILE__, __LINE__)
#define BUG_ON(c) do { if (unlikely(c)) BUG(); } while (0)
#define VM_BUG_ON(c) BUG_ON(c)
#define VM_BUG_ON_FOLIO(c, folio) BUG_ON(c)
#define VM_WARN_ON_ONCE(c) ((void)(c))
#define WARN_ON_ONCE(c) ((void)(c))
#define WARN_ON(c) ((void)(c))
#define lockdep_assert_held(l) do { } while (0)
#define EXPORT_SYMBOL(sym) extern int radiff_exported_##sym
#define EXPORT_SYMBOL_GPL(sym) extern int radiff_exported_##sym
#define rcu_read_lock() do { } while (0)
#define rcu_read_unlock() do { } while (0)
/* One task runs the model's calls: a lock is taken and given back at once. */
typedef struct {
	int radiff_unused;
} spinlock_t;
#define spin_lock(l) ((void)(l))
#define spin_unlock(l) ((void)(l))

/* ---- arithmetic (include/linux/math.h, minmax.h, log2.h, bitops) ---- */
#define __radiff_round_mask(x, y) ((__typeof__(x))((y) - 1))
#define round_up(x, y) ((((x) - 1) | __radiff_round_mask(x, y)) + 1)
#define round_down(x, y) ((x) & ~__radiff_round_mask(x, y))
#define IS_ALIGNED(x, a) (((x) & ((__typeof__(x))(a) - 1)) == 0)
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define min(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a < _b ? _a : _b; })
#define max(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a > _b ? _a : _b; })
#define min_t(t, a, b) ({ t _a = (a); t _b = (b); _a < _b ? _a : _b; })
#define max_t(t, a, b) ({ t _a = (a); t _b = (b); _a > _b ? _a : _b; })
#define clamp(v, lo, hi) min(max(v, lo), hi)
/* The runtime ilog2(): fls - 1, so -1 for 0 (which min_t(unsigned int, ...) reads as UINT_MAX). */
static inline int ilog2(unsigned long long n) { return n ? 63 - __builtin_clzll(n) : -1; }
/* x86: "ffs(int x)", 1-based, 0 for 0; the argument is an int, as the kernel's. */
static inline int ffs(int x) { return __builtin_ffs(x); }
static inline unsigned long __ffs(unsigned long x) { return __builtin_ctzl(x); }
static inline int fls_long(unsigned long x) { return x ? 64 - __builtin_clzl(x) : 0; }
/* "1UL << fls_long(n - 1)": x86 masks the shift count, so 0 and 1 both give 1. */
static inline unsigned long roundup_pow_of_two(unsigned long n) { return 1UL << (fls_long(n - 1) & 63); }

/* ---- structs ---- */
struct folio;
struct page;
struct file;
struct address_space;
struct readahead_control;
struct radiff_env;

/* The page cache's xarray: only xa_load() looks into it. */
struct xarray {
	int radiff_unused;
};

struct backing_dev_info {
	unsigned long ra_pages;
	unsigned long io_pages;
};
/* The bdi of a file system without one: never the model's (generic_fadvise() ignores advice on it). */
static struct backing_dev_info noop_backing_dev_info __maybe_unused;

struct super_block;
struct inode {
	umode_t i_mode;
	loff_t i_size;
	struct address_space *i_mapping;
	struct backing_dev_info *radiff_bdi;
	/* The file's block size (4 KiB where a file system's C reads it) and its super block. */
	u8 i_blkbits;
	struct super_block *i_sb;
};
/* The members ext4's read path reads. */
struct super_block {
	struct block_device *s_bdev;
	loff_t s_maxbytes;
};

struct address_space_operations {
	int (*read_folio)(struct file *, struct folio *);
	void (*readahead)(struct readahead_control *);
	/* NULL: the model's blocks are the page (filemap_range_uptodate() asks). */
	bool (*is_partially_uptodate)(struct folio *, size_t, size_t);
};

struct rw_semaphore {
	int radiff_unused;
};

struct address_space {
	struct inode *host;
	struct xarray i_pages;
	struct rw_semaphore invalidate_lock;
	gfp_t gfp_mask;
	unsigned long flags;
	const struct address_space_operations *a_ops;
	/* The model's answers to this mapping's helpers (radiff's own field). */
	struct radiff_env *radiff;
	/* mapping_min_folio_order() / mapping_max_folio_order(); max 0: no large folios. */
	unsigned int radiff_min_order;
	unsigned int radiff_max_order;
};

/*
 * struct file_ra_state is the tree's: the harness copies its members from the tree's
 * include/linux/fs.h into RADIFF_RA_MEMBERS (a patch's new member, 6.12's `unsigned int
 * mmap_miss`, a tree without `order`); without it, the one below. The model never reads
 * the struct itself: the harness writes radiff_ra_load() and radiff_ra_store() for the
 * tree's members into mm/readahead.c's unit, and the model keeps the bytes of each open
 * file's in the room it has for them (model/src/hybrid.rs), zero at open as the kernel's
 * memset of f_ra leaves them, from one call to the next.
 */
#define RADIFF_RA_SIZE 64

#ifndef RADIFF_RA_MEMBERS
struct file_ra_state {
	pgoff_t start;
	unsigned int size;
	unsigned int async_size;
	unsigned int ra_pages;
	unsigned short order;
	unsigned short mmap_miss;
	loff_t prev_pos;
};
#else
struct file_ra_state {
	RADIFF_RA_MEMBERS
};
#endif
/* The members of struct file_ra_state the model holds, as wide as it holds them. */
struct radiff_ra {
	unsigned long start;
	unsigned long size;
	unsigned long async_size;
	unsigned long ra_pages;
	unsigned long order;
	unsigned long mmap_miss;
	long long prev_pos;
};
void radiff_ra_load(const struct file_ra_state *ra, struct radiff_ra *m);
void radiff_ra_store(struct file_ra_state *ra, const struct radiff_ra *m);
_Static_assert(sizeof(struct file_ra_state) <= RADIFF_RA_SIZE,
	       "the tree adds more to struct file_ra_state than the model keeps (radiff_extra)");

/* vfs_fadvise() asks ->fadvise; the model calls generic_fadvise() itself (NULL here). */
struct file_operations {
	int (*fadvise)(struct file *, loff_t, loff_t, int);
};

struct file {
	fmode_t f_mode;
	struct address_space *f_mapping;
	struct inode *f_inode;
	/* Which of the model's descriptors this is (radiff's own field). */
	unsigned int radiff_fd;
	spinlock_t f_lock;
	const struct file_operations *f_op;
	/* Last: the tree's members may make it shorter than the model's room for it. */
	struct file_ra_state f_ra;
};

/*
 * Members the tree adds to struct readahead_control (a patch's new field), copied from its
 * include/linux/pagemap.h by the harness; they live in the room the model reserves after
 * its own members (model/src/hybrid.rs, radiff_extra), zeroed for each call.
 */
#ifndef RADIFF_RAC_EXTRA
#define RADIFF_RAC_EXTRA
#endif
#define RADIFF_RAC_SIZE 120

struct readahead_control {
	struct file *file;
	struct address_space *mapping;
	struct file_ra_state *ra;
	pgoff_t _index;
	unsigned int _nr_pages;
	unsigned int _batch_count;
	bool dropbehind;
	bool _workingset;
	unsigned long _pflags;
	RADIFF_RAC_EXTRA
};
_Static_assert(sizeof(struct readahead_control) <= RADIFF_RAC_SIZE,
	       "the tree adds more to struct readahead_control than the model reserves (radiff_extra)");

/* A folio as the model lends it to the C: its place, its size and its flags. */
#define RADIFF_PG_READAHEAD (1UL << 0)
#define RADIFF_PG_DROPBEHIND (1UL << 1)
#define RADIFF_PG_WORKINGSET (1UL << 2)
#define RADIFF_PG_WRITEBACK (1UL << 3)
#define RADIFF_PG_LOCKED (1UL << 4)
#define RADIFF_PG_UPTODATE (1UL << 5)
/* A page of a folio: its address is all the C uses (folio_page(), page_folio()); nothing
 * is read from it. */
struct page {
	unsigned char radiff_unused;
};
/* The folio's pages follow its members, one byte each, and each folio the model lends is
 * aligned to RADIFF_FOLIO_ALIGN: page_folio() is the page's address rounded down. */
#define RADIFF_FOLIO_ALIGN 1024
#define RADIFF_FOLIO_PAGES 512
struct folio {
	pgoff_t index;
	unsigned int order;
	unsigned long flags;
	/* NULL until filemap_add_folio() put it in a page cache. */
	struct address_space *mapping;
	struct radiff_env *radiff;
	/* &folio->page: the folio's first page; the others after it. */
	struct page page;
	unsigned char radiff_pages[RADIFF_FOLIO_PAGES - 1];
} __attribute__((aligned(RADIFF_FOLIO_ALIGN)));
_Static_assert(offsetof(struct folio, radiff_pages) + RADIFF_FOLIO_PAGES - 1 <= RADIFF_FOLIO_ALIGN,
	       "a folio's pages end before the next folio the model could lend");

struct blk_plug {
	int radiff_unused;
};

/* A bio as the model lends it to a file system's C: the device, where it starts and how
 * many bytes it holds; the model keeps its pages (radiff_id names it). */
typedef unsigned long long sector_t;
struct block_device {
	int radiff_unused;
};
struct bvec_iter {
	sector_t bi_sector;
	unsigned int bi_size;
};
typedef unsigned int blk_opf_t;
struct bio;
typedef void(bio_end_io_t)(struct bio *);
struct bio {
	struct block_device *bi_bdev;
	blk_opf_t bi_opf;
	struct bvec_iter bi_iter;
	bio_end_io_t *bi_end_io;
	unsigned long radiff_id;
	/* Segments: never counted (the model keeps the bio's pages); read only on a zoned
	 * device (6.12's f2fs), which the model has none of. */
	unsigned short bi_vcnt;
};

/* ---- the calls into the model ---- */
/* Every entry takes the model's opaque context first. Flags are RADIFF_PG_*. */
/* The cursor of a tree's own miss walk on the model's xarray (radiff_model's CXas): node 0
 * NULL, 1 XAS_BOUNDS, 2 XAS_RESTART, 3 the node of `shift` whose first slot is `base`. */
struct radiff_xas {
	unsigned long index;
	unsigned long base;
	unsigned int shift;
	unsigned char node;
	unsigned char offset;
};
struct radiff_ops {
	/* filemap_alloc_folio(): a folio of `order` not yet in the cache, NULL on failure. */
	struct folio *(*alloc_folio)(void *ctx, unsigned int order);
	/* filemap_add_folio(): 0, or -EEXIST when the range holds a folio. */
	int (*add_folio)(void *ctx, struct folio *folio, pgoff_t index);
	/* xa_load(): the cached folio holding `index`, else NULL. */
	struct folio *(*load)(void *ctx, pgoff_t index);
	pgoff_t (*next_miss)(void *ctx, pgoff_t index, unsigned long max_scan);
	pgoff_t (*prev_miss)(void *ctx, pgoff_t index, unsigned long max_scan);
	/* A flag of a folio in the cache set (set != 0) or cleared. */
	void (*folio_flag)(void *ctx, struct folio *folio, unsigned long flag, int set);
	void (*remove_folio)(void *ctx, struct folio *folio);
	/* mapping->a_ops->readahead: the file system reads the batch under a block plug. */
	void (*readahead)(void *ctx, struct readahead_control *rac);
	/* The tracepoints, in the kernel's argument order. */
	void (*trace_sync_ra)(void *ctx, pgoff_t index, struct file_ra_state *ra, unsigned long req_count);
	void (*trace_async_ra)(void *ctx, pgoff_t index, struct file_ra_state *ra, unsigned long req_count);
	void (*trace_ra_unbounded)(void *ctx, pgoff_t index, unsigned long nr_to_read, unsigned long lookahead_size);
	void (*trace_ra_order)(void *ctx, pgoff_t index, struct file_ra_state *ra);
	/* BUG(): the C hit a kernel assertion at file:line; the model does not return here. */
	void (*bug)(void *ctx, const char *file, int line);
	/* mapping_try_invalidate(): evicts the evictable folios lying wholly in [start, end]
	 * (inclusive); the number evicted, and in *nr_failed (when not NULL) the number it
	 * kept, as mm/truncate.c counts them. */
	unsigned long (*invalidate)(void *ctx, pgoff_t start, pgoff_t end, unsigned long *nr_failed);
	/* blk_start_plug() (start != 0) and blk_finish_plug(), after which the model decides
	 * when the reads submitted complete. */
	void (*plug)(void *ctx, int start);
	/* The file's blocks from `lblk`: how many (at most `len`) are written and follow one
	 * another on the device from *pblk; 0 in a hole. */
	unsigned int (*map_blocks)(void *ctx, pgoff_t lblk, unsigned int len, unsigned long long *pblk);
	/* bio_alloc(): a read bio at `sector` with room for `nr_vecs` segments (REQ_RAHEAD when
	 * `rahead`); bio_add_folio(): whether the bio took `len` bytes of the folio at `off`;
	 * submit_bio(). */
	struct bio *(*bio_alloc)(void *ctx, sector_t sector, unsigned int nr_vecs, int rahead);
	int (*bio_add_folio)(void *ctx, struct bio *bio, struct folio *folio, size_t len, size_t off);
	void (*submit_bio)(void *ctx, struct bio *bio);
	/* block_read_full_folio(): the model reads the folio block by block. */
	void (*read_full_folio)(void *ctx, struct folio *folio);
	/* mm/memory.c's fault_around_pages, as the guest's debugfs set it. */
	unsigned long (*fault_around_pages)(void *ctx);
	/* xas_find(): the first cached folio with a page in [index, max], else NULL. */
	struct folio *(*find)(void *ctx, pgoff_t index, pgoff_t max);
	/* The page table holding virtual page `vpn` in the fault's mapping: its 512 entries, 0
	 * where no page is mapped; the model keeps its own, the C reads and writes this copy. */
	unsigned char *(*pte_table)(void *ctx, unsigned long vpn);
	/* set_pte_range(): `nr` pages mapped from the virtual page `vpn`. */
	void (*set_ptes)(void *ctx, unsigned long vpn, unsigned long nr);
	/* pmd_install(): the page table installed under the fault's PMD. */
	void (*pmd_install)(void *ctx);
	/* do_set_pmd(): the folio mapped by the fault's PMD, or VM_FAULT_FALLBACK. */
	unsigned int (*set_pmd)(void *ctx, struct folio *folio);
	/* trace_mm_filemap_map_pages(). */
	void (*trace_map_pages)(void *ctx, pgoff_t start, pgoff_t end);
	/* xas_next() (up 1) or xas_prev() of the model's xarray (model/src/xarray.rs, the
	 * kernel's node walk) from cursor `xas`, moved: 1 when its slot holds an entry. */
	int (*xas_step)(void *ctx, struct radiff_xas *xas, int up);
	/* folio_trylock() of a cached folio found locked: by its read, 1 when that read has
	 * completed as the kernel found it (the model then marks the folio uptodate and the
	 * caller holds its lock), 0 when it is still in flight; by the C itself, 0. */
	int (*folio_trylock)(void *ctx, struct folio *folio);
	/* folio_wait_locked(): the reader sleeps until the read of the folio has completed
	 * (the model's reads succeed: the folio is uptodate and unlocked after). */
	void (*folio_wait)(void *ctx, struct folio *folio);
	/* mapping->a_ops->read_folio where the file system is the model's. */
	int (*read_folio)(void *ctx, struct file *file, struct folio *folio);
};

/* The model's page cache as it lends it to a call, for the lookups the C makes most
 * (xa_load(), xas_next_entry()): a byte a page, 0 where no folio is cached, else the
 * folio's order plus one (RADIFF_SLOT_ORDER), RADIFF_SLOT_HEAD on its first page, and on
 * that page whether it has PG_readahead and PG_uptodate; the C lends the folios it finds
 * from `pool` itself, as the model's `load` would. The model sets it for each call and
 * again after each of its calls from the C (which may change the cache); `cache` NULL
 * (a folio with PG_dropbehind cached, whose flag the bytes do not hold): every lookup
 * asks the model. */
#define RADIFF_SLOT_ORDER 0x1f
#define RADIFF_SLOT_HEAD 0x20
#define RADIFF_SLOT_READAHEAD 0x40
#define RADIFF_SLOT_UPTODATE 0x80
struct radiff_env {
	const struct radiff_ops *ops;
	void *ctx;
	const unsigned char *cache;
	unsigned long cache_pages;
	struct folio *pool;
	unsigned long pool_len;
	unsigned long pool_used;
};

/* The cached folio holding page `index`, lent from the pool, in *folio (NULL where none);
 * false where the C must ask the model (no view, or the pool is spent). */
static inline bool radiff_view_load(struct radiff_env *env, struct address_space *m, pgoff_t index,
				    struct folio **folio)
{
	unsigned char page, head_page;
	unsigned int order;
	pgoff_t head;
	struct folio *f;

	if (!env->cache)
		return false;
	page = index < env->cache_pages ? env->cache[index] : 0;
	if (!page) {
		*folio = NULL;
		return true;
	}
	if (env->pool_used == env->pool_len)
		return false;
	order = (page & RADIFF_SLOT_ORDER) - 1;
	head = index & ~((1UL << order) - 1);
	head_page = env->cache[head];
	f = &env->pool[env->pool_used++];
	f->index = head;
	f->order = order;
	f->flags = (head_page & RADIFF_SLOT_READAHEAD ? RADIFF_PG_READAHEAD : 0) |
		   (head_page & RADIFF_SLOT_UPTODATE ? RADIFF_PG_UPTODATE : RADIFF_PG_LOCKED);
	f->mapping = m;
	f->radiff = env;
	*folio = f;
	return true;
}

/* The first cached folio with a page in [index, max], as radiff_view_load() gives it. */
static inline bool radiff_view_find(struct radiff_env *env, struct address_space *m, pgoff_t index, pgoff_t max,
				    struct folio **folio)
{
	if (!env->cache)
		return false;
	for (; index <= max && index < env->cache_pages; index++)
		if (env->cache[index])
			return radiff_view_load(env, m, index, folio);
	*folio = NULL;
	return true;
}

/* The context of the call running on this thread, for helpers that get no mapping
 * (BUG(), blk_start_plug()): set by radiff_enter() around each call from the model. */
extern __thread struct radiff_env *radiff_current;
#ifndef RADIFF_RUNTIME_ELSEWHERE
__thread struct radiff_env *radiff_current;
void radiff_enter(struct radiff_env *env) { radiff_current = env; }

/* Crash containment. radiff_guard() runs body(data) and returns 0, or the number of the
 * signal (SIGSEGV, SIGILL, ...) that ended it: the harness's handler for those signals
 * calls radiff_crashed(), which jumps back here when a guard is running on this thread
 * and returns 0 otherwise (the crash is not the C's: the handler lets it happen). */
static __thread void *radiff_jmp[5];
static __thread int radiff_guarding;
static __thread int radiff_signal;
int radiff_guard(void (*body)(void *), void *data)
{
	if (__builtin_setjmp(radiff_jmp)) {
		radiff_guarding = 0;
		return radiff_signal;
	}
	radiff_guarding = 1;
	body(data);
	radiff_guarding = 0;
	return 0;
}
int radiff_crashed(int sig)
{
	if (!radiff_guarding)
		return 0;
	radiff_signal = sig;
	__builtin_longjmp(radiff_jmp, 1);
}
#endif /* the runtime, in mm/readahead.c's unit */

static inline void radiff_bug(const char *file, int line)
{
	if (radiff_current)
		radiff_current->ops->bug(radiff_current->ctx, file, line);
	__builtin_trap();
}

#define RADIFF_CALL(env, op, ...) ((env)->ops->op((env)->ctx, ##__VA_ARGS__))

/* The a_ops the model gives every mapping: ->readahead and ->read_folio are the model's
 * file system. */
void radiff_aops_readahead(struct readahead_control *rac);
int radiff_aops_read_folio(struct file *file, struct folio *folio);
#ifndef RADIFF_RUNTIME_ELSEWHERE
const struct address_space_operations radiff_aops = {
	.readahead = radiff_aops_readahead,
	.read_folio = radiff_aops_read_folio,
};
#endif

/* ---- inode, bdi, mapping ---- */
static inline loff_t i_size_read(const struct inode *inode) { return inode->i_size; }
static inline struct backing_dev_info *inode_to_bdi(struct inode *inode) { return inode->radiff_bdi; }
static inline struct inode *file_inode(const struct file *f) { return f->f_inode; }
static inline gfp_t readahead_gfp_mask(struct address_space *m) { return m->gfp_mask; }
static inline unsigned int mapping_min_folio_order(const struct address_space *m) { return m->radiff_min_order; }
static inline unsigned int mapping_max_folio_order(const struct address_space *m) { return m->radiff_max_order; }
static inline unsigned long mapping_min_folio_nrpages(const struct address_space *m)
{
	return 1UL << mapping_min_folio_order(m);
}
static inline bool mapping_large_folio_support(const struct address_space *m) { return m->radiff_max_order > 0; }
static inline pgoff_t mapping_align_index(const struct address_space *m, pgoff_t index)
{
	return round_down(index, mapping_min_folio_nrpages(m));
}
static inline void filemap_invalidate_lock_shared(struct address_space *m) { (void)m; }
static inline void filemap_invalidate_unlock_shared(struct address_space *m) { (void)m; }

/* ---- the page cache ---- */
static inline void *xa_load(struct xarray *xa, unsigned long index)
{
	struct address_space *m = container_of(xa, struct address_space, i_pages);
	struct folio *folio;

	if (radiff_view_load(m->radiff, m, index, &folio))
		return folio;
	return RADIFF_CALL(m->radiff, load, index);
}
/* The model's cache holds no shadow entries. */
static inline bool xa_is_value(const void *entry) { (void)entry; return false; }
/* A tree's call with a memory policy (7.3) or without (6.12). */
#define filemap_alloc_folio(gfp, order, ...) radiff_filemap_alloc_folio(gfp, order)
static inline struct folio *radiff_filemap_alloc_folio(gfp_t gfp, unsigned int order)
{
	(void)gfp;
	return RADIFF_CALL(radiff_current, alloc_folio, order);
}
static inline int filemap_add_folio(struct address_space *m, struct folio *folio, pgoff_t index, gfp_t gfp)
{
	(void)gfp;
	return RADIFF_CALL(m->radiff, add_folio, folio, index);
}
static inline void filemap_remove_folio(struct folio *folio) { RADIFF_CALL(folio->radiff, remove_folio, folio); }
#ifdef RADIFF_TREE_MISS_WALKS
/* The tree's own, taken from its mm/filemap.c into mm/readahead.c's unit. */
pgoff_t page_cache_next_miss(struct address_space *mapping, pgoff_t index, unsigned long max_scan);
pgoff_t page_cache_prev_miss(struct address_space *mapping, pgoff_t index, unsigned long max_scan);
#else
static inline pgoff_t page_cache_next_miss(struct address_space *m, pgoff_t index, unsigned long max_scan)
{
	return RADIFF_CALL(m->radiff, next_miss, index, max_scan);
}
static inline pgoff_t page_cache_prev_miss(struct address_space *m, pgoff_t index, unsigned long max_scan)
{
	return RADIFF_CALL(m->radiff, prev_miss, index, max_scan);
}
#endif

/* ---- folios ---- */
static inline long folio_nr_pages(const struct folio *folio) { return 1L << folio->order; }
static inline unsigned int folio_order(const struct folio *folio) { return folio->order; }
static inline pgoff_t folio_index(const struct folio *folio) { return folio->index; }
static inline pgoff_t folio_next_index(const struct folio *folio) { return folio->index + folio_nr_pages(folio); }
static inline size_t folio_size(const struct folio *folio) { return PAGE_SIZE << folio->order; }
static inline loff_t folio_pos(const struct folio *folio) { return (loff_t)folio->index << PAGE_SHIFT; }
static inline struct page *folio_page(struct folio *folio, unsigned long n) { return &folio->page + n; }
static inline struct page *folio_file_page(struct folio *folio, pgoff_t index)
{
	return folio_page(folio, index & (folio_nr_pages(folio) - 1));
}
#define page_folio(p) ((struct folio *)((unsigned long)(p) & ~(unsigned long)(RADIFF_FOLIO_ALIGN - 1)))
#define folio_page_idx(folio, p) ((p) - &(folio)->page)
/* Folios are the model's; references are not counted. */
static inline void folio_get(struct folio *folio) { (void)folio; }
static inline void folio_put(struct folio *folio) { (void)folio; }
static inline void folio_unlock(struct folio *folio) { folio->flags &= ~RADIFF_PG_LOCKED; }
static inline bool folio_test_locked(const struct folio *folio) { return folio->flags & RADIFF_PG_LOCKED; }
static inline void radiff_folio_flag(struct folio *folio, unsigned long flag, int set)
{
	if (set)
		folio->flags |= flag;
	else
		folio->flags &= ~flag;
	if (folio->mapping)
		RADIFF_CALL(folio->radiff, folio_flag, folio, flag, set);
}
static inline bool folio_test_readahead(const struct folio *folio) { return folio->flags & RADIFF_PG_READAHEAD; }
static inline void folio_set_readahead(struct folio *folio) { radiff_folio_flag(folio, RADIFF_PG_READAHEAD, 1); }
static inline void folio_clear_readahead(struct folio *folio) { radiff_folio_flag(folio, RADIFF_PG_READAHEAD, 0); }
static inline bool folio_test_clear_readahead(struct folio *folio)
{
	bool was = folio_test_readahead(folio);
	folio_clear_readahead(folio);
	return was;
}
static inline void __folio_set_dropbehind(struct folio *folio) { radiff_folio_flag(folio, RADIFF_PG_DROPBEHIND, 1); }
static inline void folio_set_dropbehind(struct folio *folio) { radiff_folio_flag(folio, RADIFF_PG_DROPBEHIND, 1); }
static inline bool folio_test_dropbehind(const struct folio *folio) { return folio->flags & RADIFF_PG_DROPBEHIND; }
static inline bool folio_test_workingset(const struct folio *folio) { return folio->flags & RADIFF_PG_WORKINGSET; }
static inline bool folio_test_writeback(const struct folio *folio) { return folio->flags & RADIFF_PG_WRITEBACK; }
static inline bool folio_test_uptodate(const struct folio *folio) { return folio->flags & RADIFF_PG_UPTODATE; }

/* ---- readahead_control accessors (include/linux/pagemap.h's contract) ---- */
static inline pgoff_t readahead_index(const struct readahead_control *rac) { return rac->_index; }
static inline unsigned int readahead_count(const struct readahead_control *rac) { return rac->_nr_pages; }
static inline loff_t readahead_pos(const struct readahead_control *rac) { return (loff_t)rac->_index * PAGE_SIZE; }
static inline size_t readahead_length(const struct readahead_control *rac) { return (size_t)rac->_nr_pages * PAGE_SIZE; }
/* The next folio of the batch, after stepping over the one handed out last. */
static inline struct folio *__readahead_folio(struct readahead_control *rac)
{
	struct folio *folio;

	BUG_ON(rac->_batch_count > rac->_nr_pages);
	rac->_nr_pages -= rac->_batch_count;
	rac->_index += rac->_batch_count;
	if (!rac->_nr_pages) {
		rac->_batch_count = 0;
		return NULL;
	}
	folio = xa_load(&rac->mapping->i_pages, rac->_index);
	BUG_ON(!folio);
	rac->_batch_count = folio_nr_pages(folio);
	return folio;
}
static inline struct folio *readahead_folio(struct readahead_control *rac) { return __readahead_folio(rac); }
#define DEFINE_READAHEAD(ractl, f, r, m, i) \
	struct readahead_control ractl = { .file = f, .mapping = m, .ra = r, ._index = i }

/* ---- the block layer, the scheduler, memory pressure: the plug is the model's, nothing
 * stalls, nothing reclaims ---- */
static inline void blk_start_plug(struct blk_plug *plug)
{
	(void)plug;
	RADIFF_CALL(radiff_current, plug, 1);
}
static inline void blk_finish_plug(struct blk_plug *plug)
{
	(void)plug;
	RADIFF_CALL(radiff_current, plug, 0);
}
static inline bool blk_cgroup_congested(void) { return false; }
static inline void psi_memstall_enter(unsigned long *flags) { (void)flags; }
static inline void psi_memstall_leave(unsigned long *flags) { (void)flags; }
static inline unsigned int memalloc_nofs_save(void) { return 0; }
static inline void memalloc_nofs_restore(unsigned int flags) { (void)flags; }

/* ---- tracepoints ---- */
static inline void trace_page_cache_sync_ra(struct inode *inode, pgoff_t index, struct file_ra_state *ra,
					    unsigned long req_count)
{
	RADIFF_CALL(inode->i_mapping->radiff, trace_sync_ra, index, ra, req_count);
}
static inline void trace_page_cache_async_ra(struct inode *inode, pgoff_t index, struct file_ra_state *ra,
					     unsigned long req_count)
{
	RADIFF_CALL(inode->i_mapping->radiff, trace_async_ra, index, ra, req_count);
}
static inline void trace_page_cache_ra_unbounded(struct inode *inode, pgoff_t index, unsigned long nr_to_read,
						 unsigned long lookahead_size)
{
	RADIFF_CALL(inode->i_mapping->radiff, trace_ra_unbounded, index, nr_to_read, lookahead_size);
}
static inline void trace_page_cache_ra_order(struct inode *inode, pgoff_t index, struct file_ra_state *ra)
{
	RADIFF_CALL(inode->i_mapping->radiff, trace_ra_order, index, ra);
}

/* ---- readahead(2): compiled so the file compiles; the model enters through fadvise ---- */
struct fd {
	struct file *file;
};
static inline struct fd class_fd_constructor(int fd) { (void)fd; return (struct fd){ 0 }; }
#define CLASS(name, var) struct fd var = class_##name##_constructor
#define fd_empty(f) (!(f).file)
#define fd_file(f) ((f).file)
#define IS_ANON_FILE(inode) false
#define SYSCALL_DEFINE3(name, t1, a1, t2, a2, t3, a3) long radiff_sys_##name(t1 a1, t2 a2, t3 a3)
#ifndef RADIFF_RUNTIME_ELSEWHERE
/* mm/fadvise.c's, for readahead(2), which the model never calls: the unit compiles alone. */
static inline int vfs_fadvise(struct file *file, loff_t offset, loff_t len, int advice)
{
	(void)file; (void)offset; (void)len; (void)advice;
	return -EINVAL;
}

void radiff_aops_readahead(struct readahead_control *rac) { RADIFF_CALL(rac->mapping->radiff, readahead, rac); }
int radiff_aops_read_folio(struct file *file, struct folio *folio)
{
	return RADIFF_CALL(folio->radiff, read_folio, file, folio);
}
#endif

/* The functions of mm/readahead.c and mm/fadvise.c that call one another (or that another
 * unit calls) before their definitions: the harness declares them as the tree defines them
 * (RADIFF_TREE_PROTOTYPES, each definition's own head); without it, as 7.3.4 does. */
#ifdef RADIFF_TREE_PROTOTYPES
RADIFF_TREE_PROTOTYPES
#else
void page_cache_ra_unbounded(struct readahead_control *, unsigned long, unsigned long);
void page_cache_ra_order(struct readahead_control *, struct file_ra_state *);
void force_page_cache_ra(struct readahead_control *, unsigned long);
void page_cache_sync_ra(struct readahead_control *, unsigned long);
void page_cache_async_ra(struct readahead_control *, struct folio *, unsigned long);
void readahead_expand(struct readahead_control *, loff_t, size_t);
void file_ra_state_init(struct file_ra_state *, struct address_space *);
ssize_t ksys_readahead(int, loff_t, size_t);
int generic_fadvise(struct file *, loff_t, loff_t, int);
#endif

/* include/linux/pagemap.h's wrappers (a tree's read path calls them: 6.12's). */
static inline void page_cache_sync_readahead(struct address_space *mapping, struct file_ra_state *ra,
					     struct file *file, pgoff_t index, unsigned long req_count)
{
	DEFINE_READAHEAD(ractl, file, ra, mapping, index);
	page_cache_sync_ra(&ractl, req_count);
}
static inline void page_cache_async_readahead(struct address_space *mapping, struct file_ra_state *ra,
					      struct file *file, struct folio *folio, unsigned long req_count)
{
	DEFINE_READAHEAD(ractl, file, ra, mapping, folio->index);
	page_cache_async_ra(&ractl, folio, req_count);
}

/* ---- the fault path: what mm/filemap.c's do_sync_mmap_readahead() and
 * do_async_mmap_readahead() use (include/linux/mm.h, mm_types.h, mm/internal.h) ---- */
typedef unsigned long vm_flags_t;
/* The model's own bits (model/src/fault.rs): the C only tests them. */
#define VM_SHARED ((vm_flags_t)1 << 0)
#define VM_SEQ_READ ((vm_flags_t)1 << 1)
#define VM_RAND_READ ((vm_flags_t)1 << 2)
#define VM_HUGEPAGE ((vm_flags_t)1 << 3)
#define VM_NOHUGEPAGE ((vm_flags_t)1 << 4)
#define VM_EXEC ((vm_flags_t)1 << 5)
/* enum fault_flag, include/linux/mm_types.h. */
#define FAULT_FLAG_WRITE (1 << 0)
#define FAULT_FLAG_ALLOW_RETRY (1 << 2)
#define FAULT_FLAG_RETRY_NOWAIT (1 << 3)
#define FAULT_FLAG_KILLABLE (1 << 4)
#define FAULT_FLAG_TRIED (1 << 5)
#define FAULT_FLAG_USER (1 << 6)
#define FAULT_FLAG_ORIG_PTE_VALID (1 << 11)
#define FAULT_FLAG_VMA_LOCK (1 << 12)
/* The kernel options the fault path tests: x86-64 with transparent huge pages. */
#define IS_ENABLED(option) __radiff_enabled_##option
#define __radiff_enabled_CONFIG_TRANSPARENT_HUGEPAGE 1
/* For `#ifdef CONFIG_TRANSPARENT_HUGEPAGE` too (6.12's do_sync_mmap_readahead() tests it so):
 * radiff's kernels set it (kernels/config.fragment). */
#define CONFIG_TRANSPARENT_HUGEPAGE 1
#define SZ_2M 0x00200000
#define HPAGE_PMD_ORDER 9
#define HPAGE_PMD_NR (1 << HPAGE_PMD_ORDER)
/* include/linux/pagemap.h on x86-64 with THP; radiff_model::input::MAX_PAGECACHE_ORDER. */
#define MAX_PAGECACHE_ORDER 9
/* include/asm-generic/getorder.h, at run time. */
static inline int get_order(unsigned long size)
{
	size--;
	size >>= PAGE_SHIFT;
	return size ? 64 - __builtin_clzl(size) : 0;
}
/* include/linux/pgtable.h's generic one (x86 has no other). */
static inline unsigned int exec_folio_order(void) { return 0; }

struct mm_struct;
struct vm_operations_struct;
struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	pgoff_t vm_pgoff;
	vm_flags_t vm_flags;
	struct file *vm_file;
	/* NULL: the mmap lock and the page tables are the model's. */
	struct mm_struct *vm_mm;
	const struct vm_operations_struct *vm_ops;
};
/* A PMD entry: 0 none, else the model's (a page table, or a huge mapping). */
#define RADIFF_PMD_TABLE 1
#define RADIFF_PMD_HUGE 2
typedef struct { unsigned long pmd; } pmd_t;
static inline int pmd_none(pmd_t pmd) { return !pmd.pmd; }
/* A page table entry: 0 none, 1 a page is mapped (a byte: the model's own table is copied in). */
typedef struct { unsigned char pte; } pte_t;
typedef struct page *pgtable_t;
typedef unsigned int vm_fault_t;
/* The members of struct vm_fault the fault path's readahead reads. */
struct vm_fault {
	struct vm_area_struct *vma;
	pgoff_t pgoff;
	unsigned long address;
	unsigned int flags;
	pmd_t *pmd;
	pgtable_t prealloc_pte;
	/* filemap_map_pages(): the page table entry it is at, and the table's lock. */
	pte_t *pte;
	spinlock_t *ptl;
	/* finish_fault(): the page ->fault found (a read fault copies none), and the entry
	 * the fault found (never taken: FAULT_FLAG_ORIG_PTE_VALID is not set). */
	struct page *page;
	struct page *cow_page;
	pte_t orig_pte;
};
/* ->map_pages: the model's filemap_map_pages() (model/src/hybrid/fault.rs). */
struct vm_operations_struct {
	vm_fault_t (*map_pages)(struct vm_fault *vmf, pgoff_t start_pgoff, pgoff_t end_pgoff);
};
static inline unsigned long vma_pages(const struct vm_area_struct *vma)
{
	return (vma->vm_end - vma->vm_start) >> PAGE_SHIFT;
}
static inline pgoff_t vma_start_pgoff(const struct vm_area_struct *vma) { return vma->vm_pgoff; }
static inline pgoff_t vma_end_pgoff(const struct vm_area_struct *vma) { return vma->vm_pgoff + vma_pages(vma); }
static inline bool fault_flag_allow_retry_first(unsigned int flags)
{
	return (flags & FAULT_FLAG_ALLOW_RETRY) && !(flags & FAULT_FLAG_TRIED);
}
/* A file reference is not counted; the fault lock is the model's (its fault path drops it
 * when the returned file is not NULL). */
static inline struct file *get_file(struct file *f) { return f; }
static inline void release_fault_lock(struct vm_fault *vmf) { (void)vmf; }
/* mm/internal.h's inline, as the kernel computes it from the fault's flags. */
static inline struct file *maybe_unlock_mmap_for_io(struct vm_fault *vmf, struct file *fpin)
{
	unsigned int flags = vmf->flags;

	if (fpin)
		return fpin;
	if (fault_flag_allow_retry_first(flags) && !(flags & FAULT_FLAG_RETRY_NOWAIT))
		fpin = get_file(vmf->vma->vm_file);
	return fpin;
}

/* ---- the read path's walk of the page cache (mm/filemap.c's filemap_get_read_batch();
 * include/linux/xarray.h, folio_batch.h) ---- */
/* An xarray cursor over the model's cache, by page index: loading any index of a folio
 * gives that folio, as a multi-index entry does; the cache holds no value, sibling or
 * retry entries. One task runs the call, so nothing changes the cache under the walk: a
 * reload gives the entry loaded, and a reference is always taken. After xas_reset() the
 * next xas_next() or xas_prev() loads the same index again, as the kernel's restarted walk
 * does; a new cursor is a restarted one (XAS_RESTART). */
#ifdef RADIFF_TREE_MISS_WALKS
/* mm/readahead.c's unit with the tree's own miss walks: the only cursors are theirs, and
 * each step is the model's xarray's, node by node as the kernel walks it (a walk started
 * inside a large folio reports a hole late, as the kernel's does). An entry found is
 * only told from a hole: the walks test nothing else of it. */
struct xa_state {
	struct xarray *xa;
	unsigned long xa_index;
	struct radiff_xas radiff;
};
#define XA_STATE(name, array, index) \
	struct xa_state name = { .xa = (array), .xa_index = (index), .radiff = { .node = 2 } }
static const char radiff_xa_entry;
static inline void *radiff_xas_step(struct xa_state *xas, int up)
{
	struct address_space *m = container_of(xas->xa, struct address_space, i_pages);
	int found;

	xas->radiff.index = xas->xa_index;
	found = RADIFF_CALL(m->radiff, xas_step, &xas->radiff, up);
	xas->xa_index = xas->radiff.index;
	return found ? (void *)&radiff_xa_entry : NULL;
}
static inline void *xas_next(struct xa_state *xas) { return radiff_xas_step(xas, 1); }
static inline void *xas_prev(struct xa_state *xas) { return radiff_xas_step(xas, 0); }
#else
struct xa_state {
	struct xarray *xa;
	unsigned long xa_index;
	void *radiff_entry;
	bool radiff_restart;
};
#define XA_STATE(name, array, index) \
	struct xa_state name = { .xa = (array), .xa_index = (index), .radiff_entry = NULL, .radiff_restart = true }
static inline void *xas_load(struct xa_state *xas)
{
	xas->radiff_restart = false;
	return xas->radiff_entry = xa_load(xas->xa, xas->xa_index);
}
static inline void *xas_next(struct xa_state *xas)
{
	if (!xas->radiff_restart)
		xas->xa_index++;
	return xas_load(xas);
}
static inline void *xas_prev(struct xa_state *xas)
{
	if (!xas->radiff_restart)
		xas->xa_index--;
	return xas_load(xas);
}
static inline void *xas_reload(struct xa_state *xas) { return xas->radiff_entry; }
static inline void xas_reset(struct xa_state *xas) { xas->radiff_restart = true; }
static inline void xas_advance(struct xa_state *xas, unsigned long index) { xas->xa_index = index; }
static inline bool xas_retry(struct xa_state *xas, const void *entry) { (void)xas; (void)entry; return false; }
#endif
static inline bool xa_is_sibling(const void *entry) { (void)entry; return false; }
static inline bool folio_try_get(struct folio *folio) { (void)folio; return true; }
/* include/linux/folio_batch.h: the model reads the batch back (model/src/hybrid/read.rs). */
#define FOLIO_BATCH_SIZE 31
struct folio_batch {
	unsigned char nr;
	unsigned char i;
	bool percpu_pvec_drained;
	struct folio *folios[FOLIO_BATCH_SIZE];
};
static inline unsigned int folio_batch_count(const struct folio_batch *fbatch) { return fbatch->nr; }
static inline unsigned int folio_batch_space(const struct folio_batch *fbatch) { return FOLIO_BATCH_SIZE - fbatch->nr; }
static inline unsigned int folio_batch_add(struct folio_batch *fbatch, struct folio *folio)
{
	fbatch->folios[fbatch->nr++] = folio;
	return folio_batch_space(fbatch);
}

/* filemap_read()'s arguments (the model fills them: model/src/hybrid/read.rs). */
struct iov_iter {
	size_t count;
};
struct wait_page_queue;
struct task_struct;
struct kiocb {
	struct file *ki_filp;
	loff_t ki_pos;
	int ki_flags;
	struct wait_page_queue *ki_waitq;
};
/* The flags the model's reads carry (preadv2()'s RWF_NOWAIT, RWF_DONTCACHE); the others
 * (io_uring's IOCB_WAITQ, splice's IOCB_NOIO) it never sets. */
#define IOCB_NOWAIT (1 << 3)
#define IOCB_DONTCACHE (1 << 7)
#define IOCB_WAITQ (1 << 19)
#define IOCB_NOIO (1 << 20)

/* ---- mm/fadvise.c's helpers ---- */
/* The inode is never DAX in the model. */
#define IS_DAX(inode) ((void)(inode), false)
/* mm/internal.h's inline, as radiff writes it: a readahead_control on the file's f_ra,
 * then the tree's force_page_cache_ra(). */
static inline void force_page_cache_readahead(struct address_space *mapping, struct file *file, pgoff_t index,
					      unsigned long nr_to_read)
{
	DEFINE_READAHEAD(ractl, file, &file->f_ra, mapping, index);
	force_page_cache_ra(&ractl, nr_to_read);
}
/* Write-back: the model's files are clean, there is nothing to write. */
static inline int filemap_flush_range(struct address_space *m, loff_t start, loff_t end)
{
	(void)m; (void)start; (void)end;
	return 0;
}
static inline int filemap_fdatawrite_range_kick(struct address_space *m, loff_t start, loff_t end)
{
	return filemap_flush_range(m, start, end);
}
static inline int __filemap_fdatawrite_range(struct address_space *m, loff_t start, loff_t end, int sync_mode)
{
	(void)sync_mode;
	return filemap_flush_range(m, start, end);
}
#define WB_SYNC_NONE 0
/* No per-CPU LRU caches in the model. */
static inline void lru_add_drain(void) { }
static inline void lru_add_drain_all(void) { }
static inline unsigned long mapping_try_invalidate(struct address_space *m, pgoff_t start, pgoff_t end,
						   unsigned long *nr_failed)
{
	return RADIFF_CALL(m->radiff, invalidate, start, end, nr_failed);
}
static inline unsigned long invalidate_mapping_pages(struct address_space *m, pgoff_t start, pgoff_t end)
{
	return mapping_try_invalidate(m, start, end, NULL);
}

#if defined(RADIFF_UNIT_F2FS) || defined(RADIFF_UNIT_EXT4)
/* ---- what the file systems' ->readahead and ->read_folio share: radiff's files are
 * regular, uncompressed, unencrypted, without inline data or fs-verity, on one device;
 * their block mapping and their bios are the model's ---- */
struct fsverity_info;
#define REQ_OP_READ ((blk_opf_t)0)
#define REQ_RAHEAD ((blk_opf_t)1 << 19)
#define GFP_NOFS 0
#define EOPNOTSUPP 95
#define EUCLEAN 117
#define __radiff_enabled_CONFIG_FS_VERITY 0
#define prefetchw(x) ((void)(x))
static inline unsigned int bio_max_segs(unsigned int nr_segs) { return nr_segs < 256 ? nr_segs : 256; }
/* bio_alloc(): the model's bio, which takes the sector and REQ_RAHEAD the C gives it after. */
static inline struct bio *bio_alloc(struct block_device *bdev, unsigned short nr_vecs, blk_opf_t opf, gfp_t gfp)
{
	struct bio *bio = RADIFF_CALL(radiff_current, bio_alloc, 0, nr_vecs, (opf & REQ_RAHEAD) != 0);

	(void)gfp;
	bio->bi_bdev = bdev;
	bio->bi_opf = opf;
	return bio;
}
static inline bool bio_add_folio(struct bio *bio, struct folio *folio, size_t len, size_t off)
{
	return RADIFF_CALL(folio->radiff, bio_add_folio, bio, folio, len, off);
}
static inline void submit_bio(struct bio *bio) { RADIFF_CALL(radiff_current, submit_bio, bio); }
static inline void blk_crypto_submit_bio(struct bio *bio) { submit_bio(bio); }
/* The model's block mapping: how many blocks from `lblk` (at most `len`) are written and
 * follow one another on the device from *pblk; 0 in a hole. */
static inline unsigned int radiff_map_blocks(struct inode *inode, pgoff_t lblk, unsigned int len,
					     unsigned long long *pblk)
{
	return RADIFF_CALL(inode->i_mapping->radiff, map_blocks, lblk, len, pblk);
}
/* Not encrypted: any bio merges. */
#define fscrypt_mergeable_bio(bio, inode, pos) ((void)(bio), true)
#define fscrypt_set_bio_crypt_ctx(bio, inode, pos, gfp) do { } while (0)
static inline bool bio_has_crypt_ctx(struct bio *bio) { (void)bio; return false; }
static inline struct fsverity_info *fsverity_get_info(const struct inode *inode) { (void)inode; return NULL; }
static inline void fsverity_readahead(struct fsverity_info *vi, pgoff_t index, unsigned long nr_pages)
{
	(void)vi; (void)index; (void)nr_pages;
}
/* A call with the file's fsverity_info first (7.3), or the folio alone (6.12). */
static inline bool radiff_fsverity_verify_folio2(struct fsverity_info *vi, struct folio *folio)
{
	(void)vi; (void)folio;
	return true;
}
static inline bool radiff_fsverity_verify_folio1(struct folio *folio)
{
	(void)folio;
	return true;
}
#define fsverity_verify_folio(...) \
	RADIFF_THIRD(__VA_ARGS__, radiff_fsverity_verify_folio2, radiff_fsverity_verify_folio1, \
		     radiff_fsverity_verify_folio_of_another_signature)(__VA_ARGS__)
#define IS_VERITY(inode) ((void)(inode), false)
/* The folio's data are the disk's: zeroing a hole's page changes nothing the model keeps. */
static inline void folio_zero_segment(struct folio *folio, size_t start, size_t end)
{
	(void)folio; (void)start; (void)end;
}
static inline void folio_mark_uptodate(struct folio *folio) { radiff_folio_flag(folio, RADIFF_PG_UPTODATE, 1); }
static inline void folio_end_read(struct folio *folio, bool success)
{
	if (success)
		folio_mark_uptodate(folio);
	folio_unlock(folio);
}
static inline void folio_set_mappedtodisk(struct folio *folio) { (void)folio; }
/* No buffer heads: a folio that is not one contiguous run is read by the model. */
#define folio_buffers(folio) ((void)(folio), (void *)0)
#define block_read_full_folio(folio, get_block) radiff_block_read_full_folio(folio)
static inline int radiff_block_read_full_folio(struct folio *folio)
{
	RADIFF_CALL(folio->radiff, read_full_folio, folio);
	return 0;
}
#endif /* a file system's unit */

#ifdef RADIFF_UNIT_F2FS
/* ---- f2fs's ->readahead and ->read_folio: what the functions the harness takes from
 * fs/f2fs/data.c use (fs/f2fs/f2fs.h, include/linux/f2fs_fs.h), 4 KiB blocks ---- */
typedef u32 block_t;
#define EFSCORRUPTED EUCLEAN
#define F2FS_BLKSIZE PAGE_SIZE
#define F2FS_BLKSIZE_BITS PAGE_SHIFT
#define F2FS_BYTES_TO_BLK(bytes) ((unsigned long long)(bytes) >> F2FS_BLKSIZE_BITS)
#define F2FS_BLK_TO_BYTES(blk) ((unsigned long long)(blk) << F2FS_BLKSIZE_BITS)
#define F2FS_MAP_NEW (1U << 0)
#define F2FS_MAP_MAPPED (1U << 1)
#define F2FS_MAP_DELALLOC (1U << 2)
#define F2FS_GET_BLOCK_DEFAULT 0
#define NO_CHECK_TYPE 0
#define DATA_GENERIC_ENHANCE_READ 0
#define F2FS_RD_DATA 0
#define FS_DATA_READ_IO 0
enum page_type { DATA = 0, NODE = 1, META = 2 };

/* The garbage collector's I/O: never a read's (fio is NULL). */
struct f2fs_io_info {
	void *encrypted_page;
};
/* max_io_bytes 0: no mount option caps a bio. */
struct f2fs_sb_info {
	unsigned int max_io_bytes;
};
static struct f2fs_sb_info radiff_f2fs_sbi __maybe_unused;
static struct block_device radiff_f2fs_bdev __maybe_unused;
static inline struct f2fs_sb_info *F2FS_I_SB(const struct inode *inode)
{
	(void)inode;
	return &radiff_f2fs_sbi;
}

struct f2fs_map_blocks {
	struct block_device *m_bdev;
	block_t m_pblk;
	block_t m_lblk;
	unsigned int m_len;
	unsigned int m_flags;
	unsigned long m_last_pblk;
	pgoff_t *m_next_pgofs;
	pgoff_t *m_next_extent;
	int m_seg_type;
	bool m_may_create;
	bool m_multidev_dio;
};

/* f2fs_map_blocks() for a read: the written blocks from m_lblk that follow one another on
 * the device ("blkaddr == (map->m_pblk + ofs)"), at most m_len, MAPPED; in a hole m_len 0
 * and the next offset to look at one block on. */
static inline int f2fs_map_blocks(struct inode *inode, struct f2fs_map_blocks *map, int flag)
{
	unsigned long long pblk = 0;
	unsigned int len = radiff_map_blocks(inode, map->m_lblk, map->m_len, &pblk);

	(void)flag;
	map->m_flags = 0;
	map->m_len = len;
	if (len) {
		map->m_pblk = (block_t)pblk;
		map->m_flags = F2FS_MAP_MAPPED;
	} else if (map->m_next_pgofs) {
		*map->m_next_pgofs = (pgoff_t)map->m_lblk + 1;
	}
	return 0;
}
static inline struct block_device *f2fs_target_device(struct f2fs_sb_info *sbi, block_t blkaddr, sector_t *sector)
{
	(void)sbi;
	if (sector)
		*sector = (sector_t)blkaddr << (F2FS_BLKSIZE_BITS - 9);
	return &radiff_f2fs_bdev;
}
/* 6.12's page_is_mergeable() caps a bio in a zoned device's sequential zones by the
 * queue's limits: the model's devices have no zones, as a device without
 * f2fs_sb_has_blkzoned() has none, so the limits are never read. */
struct request_queue;
static inline bool f2fs_is_sequential_zone_area(struct f2fs_sb_info *sbi, block_t blkaddr)
{
	(void)sbi; (void)blkaddr;
	return false;
}
static inline struct request_queue *bdev_get_queue(struct block_device *bdev) { (void)bdev; return NULL; }
static inline unsigned short queue_max_segments(const struct request_queue *q) { (void)q; return 0; }
static inline unsigned int queue_max_sectors(const struct request_queue *q) { (void)q; return 0; }
#ifndef SECTOR_SHIFT
#define SECTOR_SHIFT 9
#endif
static inline unsigned int bio_sectors(const struct bio *bio) { return bio->bi_iter.bi_size >> SECTOR_SHIFT; }
static inline bool f2fs_is_valid_blkaddr(struct f2fs_sb_info *sbi, block_t blkaddr, int type)
{
	(void)sbi; (void)blkaddr; (void)type;
	return true;
}

/* include/linux/err.h: 6.12's read path tests the bio it grabbed (never an error here). */
#define MAX_ERRNO 4095
static inline bool IS_ERR(const void *ptr) { return (unsigned long)ptr >= (unsigned long)-MAX_ERRNO; }
static inline long PTR_ERR(const void *ptr) { return (long)ptr; }
/* A tree's call with the file's fsverity_info (7.3) or without it (6.12). */
#define f2fs_grab_read_bio(...) \
	RADIFF_EIGHTH(__VA_ARGS__, radiff_f2fs_grab_read_bio, radiff_f2fs_grab_read_bio6, \
		      radiff_f2fs_grab_read_bio_of_another_signature)(__VA_ARGS__)
#define radiff_f2fs_grab_read_bio6(inode, ...) radiff_f2fs_grab_read_bio(inode, NULL, __VA_ARGS__)
static inline struct bio *radiff_f2fs_grab_read_bio(struct inode *inode, struct fsverity_info *vi, block_t blkaddr,
						    unsigned nr_pages, blk_opf_t op_flag, pgoff_t first_idx,
						    bool for_write)
{
	sector_t sector;
	struct bio *bio;

	(void)vi; (void)first_idx; (void)for_write;
	f2fs_target_device(F2FS_I_SB(inode), blkaddr, &sector);
	bio = RADIFF_CALL(inode->i_mapping->radiff, bio_alloc, sector, bio_max_segs(nr_pages),
			  (op_flag & REQ_RAHEAD) != 0);
	bio->bi_bdev = &radiff_f2fs_bdev;
	return bio;
}
static inline void f2fs_submit_read_bio(struct f2fs_sb_info *sbi, struct bio *bio, enum page_type type)
{
	(void)sbi; (void)type;
	if (bio)
		submit_bio(bio);
}
/* Nothing is under write-back; no statistics are kept. */
#define f2fs_wait_on_block_writeback(inode, blkaddr) do { } while (0)
#define inc_page_count(sbi, type) do { } while (0)
#define f2fs_update_iostat(sbi, inode, type, size) do { } while (0)
#define f2fs_update_read_folio_count(sbi, folio) do { } while (0)
#define trace_f2fs_readpage(folio, type) do { } while (0)
#define trace_f2fs_readpages(inode, start, nrpage) do { } while (0)
/* No compression, inline data or fs-verity. */
static inline bool f2fs_is_compress_backend_ready(struct inode *inode) { (void)inode; return true; }
static inline int f2fs_has_inline_data(struct inode *inode) { (void)inode; return 0; }
/* No fs-verity: NULL, what 7.3's own gives when fsverity_get_info() is NULL (6.12 keeps a
 * bool of it in fs/f2fs/f2fs.h, false here). */
static inline struct fsverity_info *f2fs_need_verity(const struct inode *inode, pgoff_t idx)
{
	(void)inode; (void)idx;
	return NULL;
}
/* 6.12's ->read_folio finds the mapping so. */
static inline struct address_space *folio_file_mapping(struct folio *folio) { return folio->mapping; }
static inline int f2fs_read_inline_data(struct inode *inode, struct folio *folio)
{
	(void)inode; (void)folio;
	return -EAGAIN;
}
static inline unsigned long long max_file_blocks(struct inode *inode) { (void)inode; return 0; }
/* Large folios only for immutable files (f2fs_iget()): radiff never makes one. */
static inline int f2fs_read_data_large_folio(struct inode *inode, struct fsverity_info *vi,
					     struct readahead_control *rac, struct folio *folio)
{
	(void)inode; (void)vi; (void)rac; (void)folio;
	BUG();
	return 0;
}
#endif /* RADIFF_UNIT_F2FS */

#ifdef RADIFF_UNIT_EXT4
/* ---- ext4's ->readahead and ->read_folio: what the functions the harness takes from
 * fs/ext4/readpage.c use (fs/ext4/ext4.h), extent-mapped files ---- */
typedef u32 ext4_lblk_t;
typedef u64 ext4_fsblk_t;
typedef struct radiff_journal_handle handle_t;
/* BIT(BH_New), BIT(BH_Mapped), ... of include/linux/buffer_head.h. */
#define EXT4_MAP_NEW (1U << 5)
#define EXT4_MAP_MAPPED (1U << 4)
#define EXT4_MAP_UNWRITTEN (1U << 11)
#define EXT4_MAP_BOUNDARY (1U << 9)
#define EXT4_PG_TO_LBLK(inode, pnum) (((loff_t)(pnum) << PAGE_SHIFT) >> (inode)->i_blkbits)
struct ext4_map_blocks {
	ext4_fsblk_t m_pblk;
	ext4_lblk_t m_lblk;
	unsigned int m_len;
	unsigned int m_flags;
	u64 m_seq;
};
/* ext4_map_blocks() for a read: the written blocks from m_lblk that follow one another on
 * the device, at most m_len, MAPPED (never BOUNDARY: extent-mapped); 0 in a hole (an
 * unwritten extent reads as one). */
static inline int ext4_map_blocks(handle_t *handle, struct inode *inode, struct ext4_map_blocks *map, int flags)
{
	unsigned long long pblk = 0;
	unsigned int len = radiff_map_blocks(inode, map->m_lblk, map->m_len, &pblk);

	(void)handle; (void)flags;
	map->m_flags = 0;
	if (!len)
		return 0;
	map->m_pblk = pblk;
	map->m_len = len;
	map->m_flags = EXT4_MAP_MAPPED;
	return (int)len;
}
/* The bio's completion and fs-verity's work are the model's. */
static inline void mpage_end_io(struct bio *bio) { (void)bio; }
static inline void ext4_set_verity_work(struct bio *bio, struct fsverity_info *vi) { (void)bio; (void)vi; }
/* Before 7.3 (7.2's fs/ext4/readpage.c) the same work was set up by this one. */
static inline void ext4_set_bio_post_read_ctx(struct bio *bio, const struct inode *inode, struct fsverity_info *vi)
{
	(void)bio; (void)inode; (void)vi;
}
static inline int ext4_has_inline_data(struct inode *inode) { (void)inode; return 0; }
static inline int ext4_readpage_inline(struct inode *inode, struct folio *folio)
{
	(void)inode; (void)folio;
	return -EAGAIN;
}
#define trace_ext4_read_folio(inode, folio) do { } while (0)
#endif /* RADIFF_UNIT_EXT4 */

#if defined(RADIFF_UNIT_FILEMAP) || defined(RADIFF_UNIT_MADVISE) || defined(RADIFF_UNIT_MEMORY)
/* The model's mappings are of regular files, never shmem. */
static inline bool shmem_mapping(struct address_space *m) { (void)m; return false; }
#endif

#if defined(RADIFF_UNIT_FILEMAP) || defined(RADIFF_UNIT_MEMORY)
/* ---- the page table a fault maps into: mm/filemap.c's filemap_map_pages() and
 * mm/memory.c's finish_fault() (include/linux/pgtable.h, mm.h; mm/memory.c's helpers) ---- */
/* x86-64's page tables: 512 entries a table, 2 MiB a PMD. */
#define PTRS_PER_PTE 512
#define PMD_SHIFT 21
#define PMD_SIZE (1UL << PMD_SHIFT)
#define PMD_MASK (~(PMD_SIZE - 1))
static inline unsigned long pte_index(unsigned long address) { return (address >> PAGE_SHIFT) & (PTRS_PER_PTE - 1); }
#define VM_FAULT_OOM 0x000001
#define VM_FAULT_NOPAGE 0x000100
#define VM_FAULT_FALLBACK 0x000800
static inline bool folio_test_large(const struct folio *folio) { return folio->order > 0; }
static inline bool folio_test_pmd_mappable(const struct folio *folio) { return folio->order >= HPAGE_PMD_ORDER; }
#define PageHWPoison(page) ((void)(page), false)
/* References are not counted. */
static inline void folio_ref_add(struct folio *folio, int nr) { (void)folio; (void)nr; }
static inline void folio_ref_dec(struct folio *folio) { (void)folio; }
/* include/linux/minmax.h: val in [start, start + len). */
#define in_range(val, start, len) ((val) - (start) < (len))
static inline int pmd_trans_huge(pmd_t pmd) { return pmd.pmd == RADIFF_PMD_HUGE; }
static inline void pmd_install(struct mm_struct *mm, pmd_t *pmd, pgtable_t *pte)
{
	(void)mm;
	RADIFF_CALL(radiff_current, pmd_install);
	pmd->pmd = RADIFF_PMD_TABLE;
	*pte = NULL;
}
static inline vm_fault_t radiff_do_set_pmd(struct vm_fault *vmf, struct folio *folio, struct page *page)
{
	vm_fault_t ret = RADIFF_CALL(radiff_current, set_pmd, folio);

	(void)page;
	if (!ret)
		vmf->pmd->pmd = RADIFF_PMD_HUGE;
	return ret;
}
static inline vm_fault_t radiff_do_set_pmd_page(struct vm_fault *vmf, struct page *page)
{
	return radiff_do_set_pmd(vmf, page_folio(page), page);
}
/* do_set_pmd(vmf, folio, page) (7.3), or do_set_pmd(vmf, page) (6.12: the page's folio). */
#define do_set_pmd(vmf, ...) RADIFF_THIRD(__VA_ARGS__, radiff_do_set_pmd, radiff_do_set_pmd_page, ~)(vmf, __VA_ARGS__)
/* 6.12's tests and references on a page (include/linux/page-flags.h, mm.h). */
#define PageTransCompound(page) folio_test_large(page_folio(page))
static inline void folio_ref_inc(struct folio *folio) { (void)folio; }
static inline pte_t *pte_offset_map_lock(struct mm_struct *mm, pmd_t *pmd, unsigned long addr, spinlock_t **ptl)
{
	(void)mm;
	*ptl = NULL;
	if (pmd->pmd != RADIFF_PMD_TABLE)
		return NULL;
	return (pte_t *)RADIFF_CALL(radiff_current, pte_table, addr >> PAGE_SHIFT) + pte_index(addr);
}
static inline void pte_unmap_unlock(pte_t *pte, spinlock_t *ptl) { (void)pte; (void)ptl; }
static inline pte_t ptep_get(pte_t *ptep) { return *ptep; }
static inline pte_t ptep_get_lockless(pte_t *ptep) { return *ptep; }
static inline int pte_none(pte_t pte) { return !pte.pte; }
static inline int pte_same(pte_t a, pte_t b) { return a.pte == b.pte; }
/* mm/memory.c's: `nr` entries from vmf->pte map the folio's pages from `page`, at addr. */
static inline void set_pte_range(struct vm_fault *vmf, struct folio *folio, struct page *page, unsigned int nr,
				 unsigned long addr)
{
	(void)folio; (void)page;
	for (unsigned int i = 0; i < nr; i++)
		vmf->pte[i].pte = 1;
	RADIFF_CALL(radiff_current, set_ptes, addr >> PAGE_SHIFT, nr);
}
/* The process's RSS counters: the model keeps none. */
#define MM_FILEPAGES 0
#define MM_ANONPAGES 1
static inline int mm_counter_file(struct folio *folio) { (void)folio; return MM_FILEPAGES; }
static inline void add_mm_counter(struct mm_struct *mm, int member, long value) { (void)mm; (void)member; (void)value; }
#endif /* the page table */

#ifdef RADIFF_UNIT_FILEMAP
/* ---- mm/filemap.c's filemap_map_pages(): fault-around's walk of the cache ---- */
/* The walk's next entry: the first call finds from xa_index itself (and stands there when
 * that page is inside the folio found), each later one from past the folio it found. */
static inline void *xas_next_entry(struct xa_state *xas, unsigned long max)
{
	struct address_space *m = container_of(xas->xa, struct address_space, i_pages);
	struct folio *last = xas->radiff_entry;
	unsigned long from = last ? folio_next_index(last) : xas->xa_index;
	struct folio *folio = NULL;

	if (from <= max && !radiff_view_find(m->radiff, m, from, max, &folio))
		folio = RADIFF_CALL(m->radiff, find, from, max);

	xas->radiff_entry = folio;
	if (folio)
		xas->xa_index = folio->index > from ? folio->index : from;
	return folio;
}
/* A folio in the cache the C found unlocked is the caller's to lock: one task runs. One
 * locked by its read is the model's to judge (the read may have completed by then). */
static inline bool folio_trylock(struct folio *folio)
{
	if (!folio_test_locked(folio)) {
		folio->flags |= RADIFF_PG_LOCKED;
		return true;
	}
	return folio->mapping && RADIFF_CALL(folio->radiff, folio_trylock, folio);
}
/* mm/internal.h's test, as the kernel computes it: the folio's pages all lie in the VMA. */
static inline bool folio_within_vma(struct folio *folio, struct vm_area_struct *vma)
{
	unsigned long addr;

	if (!in_range(folio->index, vma->vm_pgoff, vma_pages(vma)))
		return false;
	addr = vma->vm_start + ((folio->index - vma->vm_pgoff) << PAGE_SHIFT);
	return vma->vm_end - addr >= folio_size(folio);
}
static inline void trace_mm_filemap_map_pages(struct address_space *m, pgoff_t start, pgoff_t end)
{
	RADIFF_CALL(m->radiff, trace_map_pages, start, end);
}

/* ---- mm/filemap.c's filemap_read(): a read(2) through the page cache, and the static
 * functions it calls (filemap_get_pages(), filemap_update_page(), ...) ---- */
#define AOP_TRUNCATED_PAGE 0x80001
#define TASK_KILLABLE 0x0102
typedef int filler_t(struct file *, struct folio *);
static inline size_t iov_iter_count(const struct iov_iter *i) { return i->count; }
static inline void iov_iter_truncate(struct iov_iter *i, u64 count)
{
	if (i->count > count)
		i->count = count;
}
/* The reader's buffer is never faulted out in the model: every byte asked is copied. */
static inline size_t copy_folio_to_iter(struct folio *folio, size_t offset, size_t bytes, struct iov_iter *i)
{
	(void)folio; (void)offset;
	if (bytes > i->count)
		bytes = i->count;
	i->count -= bytes;
	return bytes;
}
static inline void folio_batch_init(struct folio_batch *fbatch)
{
	fbatch->nr = 0;
	fbatch->i = 0;
	fbatch->percpu_pvec_drained = false;
}
/* One task, never signalled; nothing reclaims; no cache line to flush on x86-64. */
#define current ((struct task_struct *)0)
static inline bool fatal_signal_pending(struct task_struct *p) { (void)p; return false; }
static inline void cond_resched(void) { }
static inline unsigned int memalloc_noio_save(void) { return 0; }
static inline void memalloc_noio_restore(unsigned int flags) { (void)flags; }
static inline bool mapping_writably_mapped(struct address_space *m) { (void)m; return false; }
static inline void flush_dcache_folio(struct folio *folio) { (void)folio; }
/* The LRU and atime are not the model's. */
static inline void folio_mark_accessed(struct folio *folio) { (void)folio; }
static inline void file_accessed(struct file *file) { (void)file; }
static inline void trace_mm_filemap_get_pages(struct address_space *m, pgoff_t index, pgoff_t last)
{
	(void)m; (void)index; (void)last;
}
static inline bool filemap_invalidate_trylock_shared(struct address_space *m) { (void)m; return true; }
static inline gfp_t mapping_gfp_mask(struct address_space *m) { return m->gfp_mask; }
static inline gfp_t mapping_gfp_constraint(struct address_space *m, gfp_t gfp) { return m->gfp_mask & gfp; }
static inline unsigned int folio_shift(const struct folio *folio) { return PAGE_SHIFT + folio->order; }
static inline size_t mapping_min_folio_nrbytes(struct address_space *m)
{
	return PAGE_SIZE << mapping_min_folio_order(m);
}
/* The model's folios are clean, never under write-back. */
static inline bool folio_test_dirty(const struct folio *folio) { (void)folio; return false; }
static inline bool folio_test_clear_dropbehind(struct folio *folio)
{
	bool was = folio_test_dropbehind(folio);
	radiff_folio_flag(folio, RADIFF_PG_DROPBEHIND, 0);
	return was;
}
/* Only a folio with PG_dropbehind is asked (filemap_end_dropbehind()): the scenario parser
 * refuses RWF_DONTCACHE in a scenario with mappings, so none is mapped. */
static inline bool folio_mapped(struct folio *folio) { (void)folio; return false; }
static inline int folio_unmap_invalidate(struct address_space *m, struct folio *folio, gfp_t gfp)
{
	(void)m; (void)gfp;
	filemap_remove_folio(folio);
	return 0;
}
/* The sleeps of a reader on a folio under read: the model completes the read. */
static inline void folio_wait_locked(struct folio *folio) { RADIFF_CALL(folio->radiff, folio_wait, folio); }
static inline int folio_wait_locked_killable(struct folio *folio)
{
	folio_wait_locked(folio);
	return 0;
}
static inline int folio_put_wait_locked(struct folio *folio, int state)
{
	(void)state;
	folio_wait_locked(folio);
	return 0;
}
/* IOCB_WAITQ (io_uring) is never set in the model. */
static inline int __folio_lock_async(struct folio *folio, struct wait_page_queue *wait)
{
	(void)folio; (void)wait;
	BUG();
	return 0;
}
#endif /* RADIFF_UNIT_FILEMAP */

#ifdef RADIFF_UNIT_MADVISE
/* ---- mm/madvise.c's madvise_willneed(): MADV_WILLNEED on one VMA of a file mapping ---- */
/* The mmap lock and the file's reference are the model's: nothing to take or drop. */
static inline void mmap_read_lock(struct mm_struct *mm) { (void)mm; }
static inline void mmap_read_unlock(struct mm_struct *mm) { (void)mm; }
static inline void fput(struct file *f) { (void)f; }
/* CONFIG_SWAP is left undefined, which leaves the same path for a file (the anonymous and
 * shmem ones are never taken). */
static inline void shmem_swapin_range(struct vm_area_struct *vma, unsigned long start, unsigned long end,
				      struct address_space *mapping)
{
	(void)vma; (void)start; (void)end; (void)mapping;
	BUG();
}
/* mm/fadvise.c's, in its unit: the file's ->fadvise (f_op) is NULL, so generic_fadvise(),
 * as XFS's (which only locks around it), ext4's and f2fs's for WILLNEED (which adds only
 * its extent precache) come to. */
int vfs_fadvise(struct file *file, loff_t offset, loff_t len, int advice);
#define MADV_WILLNEED 3
/* The model calls it on one VMA's part [start, end) of the range, as madvise_walk_vmas()
 * does: the shim fills the tree's own struct madvise_behavior (its layout is the tree's)
 * for MADV_WILLNEED under the mmap read lock. */
#define RADIFF_SHIM_madvise_willneed \
	long radiff_shim_madvise_willneed(struct vm_area_struct *vma, unsigned long start, unsigned long end) \
	{ \
		struct madvise_behavior b = { .behavior = MADV_WILLNEED, .lock_mode = MADVISE_MMAP_READ_LOCK, \
					      .range = { .start = start, .end = end }, .vma = vma }; \
		return ((radiff_type_madvise_willneed *)madvise_willneed)(&b); \
	}
#endif /* RADIFF_UNIT_MADVISE */

#ifdef RADIFF_UNIT_MEMORY
/* ---- mm/memory.c's do_fault_around() and finish_fault() ---- */
/* The file's static variable, read from the model at each use (an lvalue, for READ_ONCE()). */
static inline const unsigned long *radiff_fault_around_pages(void)
{
	static __thread unsigned long pages;
	pages = RADIFF_CALL(radiff_current, fault_around_pages);
	return &pages;
}
#define fault_around_pages (*radiff_fault_around_pages())
/* include/uapi/linux/const.h's arithmetic, for a power-of-two a. */
#define ALIGN_DOWN(x, a) ((((x) - ((a) - 1)) + ((__typeof__(x))(a) - 1)) & ~((__typeof__(x))(a) - 1))
#define min3(x, y, z) min(min(x, y), z)
/* The model installs the page table itself (pmd_install()): a token, never NULL. */
static inline pgtable_t pte_alloc_one(struct mm_struct *mm)
{
	static char token;
	(void)mm;
	return (pgtable_t)(void *)&token;
}
/* pte_alloc(): a page table under the PMD where it is none; 0 (never out of memory). */
static inline int pte_alloc(struct mm_struct *mm, pmd_t *pmd)
{
	pgtable_t token = pte_alloc_one(mm);

	if (pmd_none(*pmd))
		pmd_install(mm, pmd, &token);
	return 0;
}
/* The mm is never being torn down; no userfaultfd; the TLB is the model's. */
static inline vm_fault_t check_stable_address_space(struct mm_struct *mm) { (void)mm; return 0; }
static inline bool userfaultfd_armed(struct vm_area_struct *vma) { (void)vma; return false; }
/* A file mapping, never anonymous shmem (6.12's finish_fault() asks). */
static inline bool vma_is_anon_shmem(struct vm_area_struct *vma) { (void)vma; return false; }
static inline void update_mmu_tlb(struct vm_area_struct *vma, unsigned long address, pte_t *ptep)
{
	(void)vma; (void)address; (void)ptep;
}
#endif /* RADIFF_UNIT_MEMORY */

/* The types the model calls each kernel function with (model/src/hybrid/functions.rs):
 * the harness exports each function the tree defines as radiff_entry_NAME, NULL where the
 * tree's type is another (the model then keeps its port of it). */
typedef void radiff_type_page_cache_sync_ra(struct readahead_control *, unsigned long);
typedef void radiff_type_page_cache_async_ra(struct readahead_control *, struct folio *, unsigned long);
typedef void radiff_type_force_page_cache_ra(struct readahead_control *, unsigned long);
typedef void radiff_type_page_cache_ra_order(struct readahead_control *, struct file_ra_state *);
typedef void radiff_type_page_cache_ra_unbounded(struct readahead_control *, unsigned long, unsigned long);
typedef void radiff_type_file_ra_state_init(struct file_ra_state *, struct address_space *);
typedef int radiff_type_generic_fadvise(struct file *, loff_t, loff_t, int);
typedef struct file *radiff_type_do_sync_mmap_readahead(struct vm_fault *);
typedef struct file *radiff_type_do_async_mmap_readahead(struct vm_fault *, struct folio *);
typedef void radiff_type_f2fs_readahead(struct readahead_control *);
typedef int radiff_type_f2fs_read_data_folio(struct file *, struct folio *);
typedef void radiff_type_ext4_readahead(struct readahead_control *);
typedef int radiff_type_ext4_read_folio(struct file *, struct folio *);
typedef void radiff_type_filemap_get_read_batch(struct address_space *, pgoff_t, pgoff_t, struct folio_batch *);
struct kiocb;
struct iov_iter;
typedef ssize_t radiff_type_filemap_read(struct kiocb *, struct iov_iter *, ssize_t);
typedef int radiff_type_filemap_get_pages(struct kiocb *, size_t, struct folio_batch *, bool);
#define RADIFF_ENTRY(name) \
	void *const radiff_entry_##name = __builtin_choose_expr( \
		__builtin_types_compatible_p(__typeof__(name), radiff_type_##name), (void *)name, (void *)0)
/* A function the model calls through radiff's shim (RADIFF_SHIM_name, which builds the
 * tree's struct from the model's arguments): the shim's address where the tree's function
 * has the type the shim calls it with. */
struct madvise_behavior;
typedef long radiff_type_madvise_willneed(struct madvise_behavior *);
typedef vm_fault_t radiff_type_do_fault_around(struct vm_fault *);
typedef vm_fault_t radiff_type_finish_fault(struct vm_fault *);
typedef vm_fault_t radiff_type_filemap_map_pages(struct vm_fault *, pgoff_t, pgoff_t);
#define RADIFF_SHIM_ENTRY(name) \
	void *const radiff_entry_##name = __builtin_choose_expr( \
		__builtin_types_compatible_p(__typeof__(name), radiff_type_##name), (void *)radiff_shim_##name, (void *)0)

#endif
