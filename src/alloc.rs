//! The guest's allocator: small blocks by size class, larger ones from the
//! system allocator (wasi-libc's dlmalloc).
//!
//! A request allocates thousands of small blocks (map nodes, strings,
//! compiled expressions) and frees most of them soon after; dlmalloc's
//! bookkeeping for each was a tenth of the guest's time. Here a small
//! block is popped from its class's free list or cut from a chunk, and a
//! freed one pushed back: no headers, no coalescing. Freed blocks are kept
//! for their class, so memory stays bounded by the peak of each class on
//! an instance a host reuses.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;

/// Block sizes, each about 1.25× the one before, and 416 for the B-tree
/// nodes of `serde_json` objects (408 bytes), the request's commonest block.
const CLASSES: [usize; 26] = [
    8, 16, 24, 32, 40, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 288, 320, 384, 416, 448, 512,
    640, 768, 1024, 1280, 1536,
];
const LARGEST: usize = 1536;
/// Blocks of the classes above this size are cut from chunks of their own.
/// Cut from the chunks small blocks come from, a large block often found
/// too little room left and opened a new chunk, leaving the rest to
/// smaller classes that may never ask for it: a 1 MiB ConfigMap of
/// 1,000-byte values touched 72 more pages (290 KiB) that way.
const CHUNKED: usize = 512;
/// Blocks are cut from chunks of this size. dlmalloc writes just past each
/// chunk it hands out, so a chunk's last page is touched (and faulted in)
/// at once: a small chunk keeps a small request from paying for pages it
/// never uses (12.0 faults a request on the conformance cases with 4 KiB
/// chunks, 12.7 with 16 KiB).
const CHUNK: usize = 4 * 1024;
/// Every class size is a multiple of this, and so is every block's address.
const ALIGN: usize = 8;

/// The class of each size, by `(size + 7) / 8`. Built at compile time: an
/// index out of range fails the build, not a request.
#[allow(clippy::indexing_slicing)]
const CLASS_OF: [u8; LARGEST / 8 + 1] = {
    let mut table = [0u8; LARGEST / 8 + 1];
    let mut units = 0;
    let mut class = 0;
    while units <= LARGEST / 8 {
        while CLASSES[class] < units * 8 {
            class += 1;
        }
        table[units] = class as u8;
        units += 1;
    }
    table
};

/// A chunk blocks are cut from, front to back.
#[derive(Clone, Copy)]
struct Region {
    next: *mut u8,
    end: *mut u8,
}

struct State {
    free: [*mut u8; CLASSES.len()],
    /// Blocks of the classes up to [`CHUNKED`] bytes.
    small: Region,
    /// Blocks of the larger classes, cut from chunks of their own.
    large: Region,
}

impl State {
    /// Hands what is left of `region`'s chunk to the free lists, largest
    /// class first.
    fn free_tail(&mut self, mut region: Region) {
        for (class, &size) in CLASSES.iter().enumerate().rev() {
            while (region.end as usize).saturating_sub(region.next as usize) >= size {
                let block = region.next;
                if let Some(head) = self.free.get_mut(class) {
                    // SAFETY: `size` unused bytes of the chunk, aligned to 8.
                    unsafe { block.cast::<*mut u8>().write(*head) };
                    *head = block;
                }
                // SAFETY: within the chunk.
                region.next = unsafe { block.add(size) };
            }
        }
    }
}

pub struct SizeClasses(UnsafeCell<State>);

// SAFETY: the guest is single-threaded (wasm32 without threads); natively
// the type is only used unshared, by its tests.
#[cfg(target_arch = "wasm32")]
unsafe impl Sync for SizeClasses {}

impl SizeClasses {
    pub const fn new() -> Self {
        let empty = Region {
            next: ptr::null_mut(),
            end: ptr::null_mut(),
        };
        Self(UnsafeCell::new(State {
            free: [ptr::null_mut(); CLASSES.len()],
            small: empty,
            large: empty,
        }))
    }
}

fn class(layout: &Layout) -> Option<usize> {
    if layout.align() > ALIGN || layout.size() > LARGEST {
        return None;
    }
    CLASS_OF
        .get(layout.size().div_ceil(8))
        .map(|&c| usize::from(c))
}

unsafe impl GlobalAlloc for SizeClasses {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let Some(class) = class(&layout) else {
            // SAFETY: forwarded as received.
            return unsafe { System.alloc(layout) };
        };
        // SAFETY: single-threaded; no other reference to the state lives.
        let state = unsafe { &mut *self.0.get() };
        let Some(head) = state.free.get_mut(class) else {
            return ptr::null_mut();
        };
        if !head.is_null() {
            let block = *head;
            // SAFETY: a free block holds the address of the next one.
            *head = unsafe { block.cast::<*mut u8>().read() };
            return block;
        }
        let size = CLASSES.get(class).copied().unwrap_or(LARGEST);
        // A copy, put back below: refilling needs the whole state.
        let mut region = if size > CHUNKED {
            state.large
        } else {
            state.small
        };
        if (region.end as usize).saturating_sub(region.next as usize) < size {
            // The rest of the chunk goes to the classes it can still serve.
            state.free_tail(region);
            // SAFETY: a valid, non-zero layout.
            let chunk = unsafe { System.alloc(Layout::from_size_align_unchecked(CHUNK, ALIGN)) };
            if chunk.is_null() {
                return chunk;
            }
            region.next = chunk;
            // SAFETY: within the chunk just allocated.
            region.end = unsafe { chunk.add(CHUNK) };
        }
        let block = region.next;
        // SAFETY: `size` bytes remain in the chunk.
        region.next = unsafe { block.add(size) };
        if size > CHUNKED {
            state.large = region;
        } else {
            state.small = region;
        }
        block
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        let Some(class) = class(&layout) else {
            // SAFETY: allocated by `System` with this layout.
            return unsafe { System.dealloc(block, layout) };
        };
        // SAFETY: single-threaded; no other reference to the state lives.
        let state = unsafe { &mut *self.0.get() };
        if let Some(head) = state.free.get_mut(class) {
            // SAFETY: the block is at least 8 bytes, aligned to 8, and ours again.
            unsafe { block.cast::<*mut u8>().write(*head) };
            *head = block;
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller guarantees a valid layout for the new size.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        match (class(&layout), class(&new_layout)) {
            (Some(a), Some(b)) if a == b => block,
            // SAFETY: forwarded as received.
            (None, None) => unsafe { System.realloc(block, layout, new_size) },
            _ => {
                // SAFETY: a fresh block of the new size, then the old one freed.
                unsafe {
                    let moved = self.alloc(new_layout);
                    if !moved.is_null() {
                        ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                    moved
                }
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::indexing_slicing)]
mod tests {
    use super::*;

    #[test]
    fn every_size_maps_to_the_smallest_class_that_holds_it() {
        for size in 1..=LARGEST {
            let layout = Layout::from_size_align(size, 1).unwrap();
            let class = class(&layout).unwrap();
            assert!(CLASSES[class] >= size, "{size}");
            assert!(class == 0 || CLASSES[class - 1] < size, "{size}");
        }
        let cases = [
            ("larger_than_the_largest_class", 1537, 8),
            ("aligned_beyond_eight", 64, 16),
        ];
        for (name, size, align) in cases {
            assert_eq!(
                class(&Layout::from_size_align(size, align).unwrap()),
                None,
                "{name}"
            );
        }
    }

    /// Fills a block with a byte of its own and checks it is still there.
    fn fill(block: *mut u8, size: usize, byte: u8) {
        unsafe { ptr::write_bytes(block, byte, size) };
    }

    fn holds(block: *mut u8, size: usize, byte: u8) -> bool {
        (0..size).all(|i| unsafe { block.add(i).read() } == byte)
    }

    #[test]
    fn blocks_are_aligned_apart_and_reused_by_their_class() {
        let heap = SizeClasses::new();
        let sizes = [1, 7, 8, 9, 24, 100, 1000, 1536, 1537, 5000, 40_000];
        let blocks: Vec<(*mut u8, Layout)> = (0..300)
            .map(|i| {
                let layout = Layout::from_size_align(sizes[i % sizes.len()], 8).unwrap();
                let block = unsafe { heap.alloc(layout) };
                assert!(!block.is_null());
                assert_eq!(block as usize % 8, 0);
                fill(block, layout.size(), i as u8);
                (block, layout)
            })
            .collect();
        // No block overlaps another: each still holds its own byte.
        for (i, (block, layout)) in blocks.iter().enumerate() {
            assert!(holds(*block, layout.size(), i as u8), "block {i}");
        }
        let (first, layout) = blocks[3];
        unsafe { heap.dealloc(first, layout) };
        // A freed block is the next one its class hands out.
        let again = unsafe { heap.alloc(Layout::from_size_align(9, 1).unwrap()) };
        assert_eq!(again, first);
        for (block, layout) in blocks.into_iter().skip(4) {
            unsafe { heap.dealloc(block, layout) };
        }
    }

    #[test]
    fn the_rest_of_a_full_chunk_serves_smaller_classes() {
        let heap = SizeClasses::new();
        let block = Layout::from_size_align(448, 8).unwrap();
        let first = unsafe { heap.alloc(block) };
        let per_chunk = CHUNK / 448;
        for _ in 1..=per_chunk {
            // The last of these opens a second chunk.
            assert!(!unsafe { heap.alloc(block) }.is_null());
        }
        // 4 KiB holds nine 448-byte blocks and 64 bytes more.
        let rest = unsafe { heap.alloc(Layout::from_size_align(60, 8).unwrap()) };
        assert_eq!(rest as usize, first as usize + per_chunk * 448);
    }

    #[test]
    fn large_blocks_come_from_chunks_of_their_own() {
        let heap = SizeClasses::new();
        let small = Layout::from_size_align(8, 8).unwrap();
        let large = Layout::from_size_align(1000, 8).unwrap();
        let before = unsafe { heap.alloc(small) };
        let bigs: Vec<*mut u8> = (0..4).map(|_| unsafe { heap.alloc(large) }).collect();
        let after = unsafe { heap.alloc(small) };
        // Small blocks go on where they left off, between large ones.
        assert_eq!(after as usize, before as usize + 8);
        // Four 1024-byte blocks fill one 4 KiB chunk, back to back.
        for pair in bigs.windows(2) {
            assert_eq!(pair[1] as usize, pair[0] as usize + 1024);
        }
        unsafe { heap.dealloc(bigs[1], large) };
        // Any size of the class gets the freed block back.
        let again = unsafe { heap.alloc(Layout::from_size_align(1024, 8).unwrap()) };
        assert_eq!(again, bigs[1]);
    }

    #[test]
    fn realloc_keeps_the_contents_within_and_across_classes_and_the_system() {
        let heap = SizeClasses::new();
        let cases = [
            ("same_class", 17, 24),
            ("smaller_class", 700, 30),
            ("larger_class", 30, 700),
            ("class_to_system", 100, 10_000),
            ("system_to_class", 10_000, 100),
            ("system_to_system", 10_000, 20_000),
        ];
        for (name, from, to) in cases {
            let layout = Layout::from_size_align(from, 8).unwrap();
            let block = unsafe { heap.alloc(layout) };
            fill(block, from, 0xA5);
            let moved = unsafe { heap.realloc(block, layout, to) };
            assert!(!moved.is_null(), "{name}");
            assert!(holds(moved, from.min(to), 0xA5), "{name}");
            if name == "same_class" {
                assert_eq!(moved, block, "{name}");
            }
            unsafe { heap.dealloc(moved, Layout::from_size_align(to, 8).unwrap()) };
        }
    }
}
