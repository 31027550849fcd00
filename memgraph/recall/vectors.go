package recall

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/mindmount/mindmount/memgraph/atomicfile"
)

// Embedder turns texts into vectors, one per text, in order. consolidate's
// model providers implement it (Ollama /api/embed, OpenAI /v1/embeddings).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// embedBatch is how many texts go to the model in one call.
const embedBatch = 32

// Vectors is a persistent cache of embeddings keyed by the SHA-256 of the
// model name and the embedded text, so a memory is embedded again only when
// its text or the model changes. The cache is an append-only file per model
// in a directory outside git (.mindmount/cache/vectors); deleting it is always
// safe. Safe for concurrent use.
type Vectors struct {
	e     Embedder
	model string
	dir   string

	mu     sync.Mutex
	mem    map[[32]byte][]float32 // normalised vectors
	loaded bool
	f      *os.File
}

// NewVectors returns a cache for the embedder e, which serves model, stored
// in dir. dir may be "" for a memory-only cache (tests).
func NewVectors(e Embedder, model, dir string) *Vectors {
	return &Vectors{e: e, model: model, dir: dir, mem: map[[32]byte][]float32{}}
}

// Model returns the model name the cache is keyed by.
func (v *Vectors) Model() string { return v.model }

func (v *Vectors) key(text string) [32]byte {
	h := sha256.New()
	io.WriteString(h, v.model)
	h.Write([]byte{0})
	io.WriteString(h, text)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

func (v *Vectors) file() string {
	sum := sha256.Sum256([]byte(v.model))
	return filepath.Join(v.dir, hex.EncodeToString(sum[:8])+".vec")
}

// Load reads the cache file once. A torn record at the end (a crash while
// appending) ends the read; the next append starts after the good part.
func (v *Vectors) Load() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.loadLocked()
}

func (v *Vectors) loadLocked() error {
	if v.loaded || v.dir == "" {
		v.loaded = true
		return nil
	}
	v.loaded = true
	f, err := os.Open(v.file())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var hdr [36]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return nil
		}
		var k [32]byte
		copy(k[:], hdr[:32])
		n := binary.LittleEndian.Uint32(hdr[32:])
		if n == 0 || n > 1<<16 {
			return fmt.Errorf("vector cache %s: bad record, delete it to rebuild", v.file())
		}
		buf := make([]byte, 4*n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil
		}
		vec := make([]float32, n)
		for i := range vec {
			vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
		}
		v.mem[k] = vec
	}
}

// Len returns the number of cached vectors.
func (v *Vectors) Len() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.mem)
}

// cached returns the vector for key without calling the model.
func (v *Vectors) cached(k [32]byte) []float32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.mem[k]
}

// Embed returns the normalised vectors of texts, calling the model only for
// texts not in the cache, in batches, and storing what it gets.
func (v *Vectors) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	keys := make([][32]byte, len(texts))
	out := make([][]float32, len(texts))
	var missing []int
	v.mu.Lock()
	if err := v.loadLocked(); err != nil {
		v.mu.Unlock()
		return nil, err
	}
	for i, t := range texts {
		keys[i] = v.key(t)
		if vec, ok := v.mem[keys[i]]; ok {
			out[i] = vec
		} else {
			missing = append(missing, i)
		}
	}
	v.mu.Unlock()
	for start := 0; start < len(missing); start += embedBatch {
		idx := missing[start:min(start+embedBatch, len(missing))]
		batch := make([]string, len(idx))
		for j, i := range idx {
			batch[j] = texts[i]
		}
		vecs, err := v.e.Embed(ctx, batch)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("embedding model returned %d vectors for %d texts", len(vecs), len(batch))
		}
		for j, i := range idx {
			vec := normalize(vecs[j])
			if vec == nil {
				return nil, fmt.Errorf("embedding model returned an empty or zero vector")
			}
			out[i] = vec
			if err := v.store(keys[i], vec); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func (v *Vectors) store(k [32]byte, vec []float32) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.mem[k]; ok {
		return nil
	}
	v.mem[k] = vec
	if v.dir == "" {
		return nil
	}
	if v.f == nil {
		if err := os.MkdirAll(v.dir, 0o755); err != nil {
			return err
		}
		// The cache is derived data: keep it out of git even in a
		// repository whose .gitignore does not mention it.
		ign := filepath.Join(v.dir, ".gitignore")
		if _, err := os.Stat(ign); errors.Is(err, os.ErrNotExist) {
			if err := os.WriteFile(ign, []byte("*\n"), 0o644); err != nil {
				return err
			}
		}
		f, err := os.OpenFile(v.file(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		v.f = f
	}
	buf := record(k, vec)
	// One write per record: an append of a few KiB lands whole or, after a
	// crash, as a torn tail that Load skips.
	_, err := v.f.Write(buf)
	return err
}

// compact drops the vectors whose key is not in keep and rewrites the cache
// file with the rest (temp file, fsync, rename), so vectors of memories
// that changed or went away do not pile up. A process still appending to
// the old file loses those appends to the rename: only cache, re-embedded
// on demand.
func (v *Vectors) compact(keep map[[32]byte]bool) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for k := range v.mem {
		if !keep[k] {
			delete(v.mem, k)
		}
	}
	if v.dir == "" {
		return nil
	}
	if err := os.MkdirAll(v.dir, 0o755); err != nil {
		return err
	}
	f, err := atomicfile.Create(v.file(), 0o644)
	if err != nil {
		return err
	}
	defer f.Abort() // after Commit there is nothing to remove
	w := bufio.NewWriter(f)
	for k, vec := range v.mem {
		if _, err := w.Write(record(k, vec)); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if v.f != nil {
		v.f.Close()
		v.f = nil
	}
	return f.Commit()
}

// record encodes one cache record: key, dimension, little-endian floats.
func record(k [32]byte, vec []float32) []byte {
	buf := make([]byte, 36+4*len(vec))
	copy(buf, k[:])
	binary.LittleEndian.PutUint32(buf[32:], uint32(len(vec)))
	for i, x := range vec {
		binary.LittleEndian.PutUint32(buf[36+4*i:], math.Float32bits(x))
	}
	return buf
}

// Close closes the cache file.
func (v *Vectors) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.f == nil {
		return nil
	}
	err := v.f.Close()
	v.f = nil
	return err
}

// normalize returns vec scaled to unit length (a copy), or nil for a zero
// or non-finite vector, so cosine similarity is a dot product.
func normalize(vec []float32) []float32 {
	var s float64
	for _, x := range vec {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return nil
	}
	inv := 1 / math.Sqrt(s)
	out := make([]float32, len(vec))
	for i, x := range vec {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(-1)
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}
