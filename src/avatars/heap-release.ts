/**
 * The C heap after an image: glibc's allocator, told to give back what the decoder freed.
 *
 * libvips allocates an image's line buffers with malloc on whichever thread decodes it, and glibc keeps what is freed
 * for later: in the arena of that thread, at the top of each arena's heap (up to 64 MB each once its thresholds have
 * grown, which they do after large blocks are freed), and between the blocks still in use. Decoded one at a time,
 * sixteen PNGs of 65,535 × 600 left 1.2 GB resident that way, none of it given back while the process lived
 * (measured). Two remedies, through koffi:
 *
 * - once, `mallopt` fixes both thresholds at 1 MiB (glibc starts them at 128 KiB and raises them as it sees large
 *   blocks freed): a block of 1 MiB or more is a mapping of its own, unmapped when freed, and the free top of every
 *   arena is given back once over 1 MiB;
 * - after each image, `malloc_trim(0)` gives back the free pages between the blocks still in use, on a thread of
 *   libuv's pool (it takes 10 to 100 ms after a large image), so the event loop never waits for it.
 *
 * Sixteen decodes of the largest images taken (docs/api.md R4.23.2), one at a time, in a process of 63 MB: 389 MB at
 * the peak and 356 MB left after them without either, 198 MB and 64 MB with both (measured). A process whose C
 * library is not glibc (musl, macOS, Windows) has neither function: nothing is done there.
 */
export interface HeapRelease {
  /** Gives the C heap's free pages back to the system; resolves when done. */
  release(): Promise<void>
}

/** glibc's `mallopt` parameters (malloc.h). */
const M_TRIM_THRESHOLD = -1
const M_MMAP_THRESHOLD = -3
const THRESHOLD_BYTES = 1024 * 1024

const NOTHING: HeapRelease = { release: async () => {} }

let loading: Promise<HeapRelease> | null = null

/** The heap's release, loaded (and the thresholds set) at the first call. */
export function heapRelease(): Promise<HeapRelease> {
  loading ??= load()
  return loading
}

async function load(): Promise<HeapRelease> {
  if (process.platform !== 'linux') return NOTHING
  try {
    const { default: koffi } = await import('koffi')
    // glibc's soname on every architecture it runs on; musl has none by this name, so the load fails there
    const libc = koffi.load('libc.so.6')
    const mallopt = libc.func('int mallopt(int param, int value)')
    const mallocTrim = libc.func('int malloc_trim(size_t pad)')
    mallopt(M_MMAP_THRESHOLD, THRESHOLD_BYTES)
    mallopt(M_TRIM_THRESHOLD, THRESHOLD_BYTES)
    return {
      release: () =>
        new Promise<void>((resolve) => {
          // its result only says whether anything was given back: nothing to act on, and nothing that can fail
          mallocTrim.async(0, () => resolve())
        }),
    }
  } catch {
    return NOTHING
  }
}
