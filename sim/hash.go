package sim

import "github.com/simbench/simbench/traces"

// Prompt contents are known only through a trace's hash_ids: trace block j
// (Workload.BlockSize tokens, 512 for Mooncake) holds tokens all equal to
// hash_ids[j], as in DynoSim's token synthesis. The simulator re-chunks those
// tokens at the engine's block size and chains the hashes: engine block k's
// hash mixes block k−1's hash with the (id, run length) runs it covers, so two
// requests share an engine block exactly when they share every token up to
// its end. Only full engine blocks are hashed; a trace block missing from
// hash_ids (or a request without any) gets content unique to the request.

// mix64 is the MurmurHash3 finaliser.
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb93e63fe5a4b
	h ^= h >> 33
	return h
}

// chain extends hash h with a run of n tokens of value id.
func chain(h, id, n uint64) uint64 {
	return mix64((h^id)*0x9e3779b97f4a7c15 + n + 0x632be59bd9b4e019)
}

// contentID is the token value of trace block j of a request.
func contentID(ids []int64, j int, salt uint64) uint64 {
	if j < len(ids) {
		return uint64(ids[j]) &^ (1 << 63)
	}
	return mix64(salt*0x9e3779b97f4a7c15+uint64(j)) | 1<<63
}

// blockHashes appends to dst the chained hashes of the full engine blocks of
// a prompt of isl tokens. traceBS is the workload's block size (0 = the
// engine's) and salt makes unknown content unique to the request.
func blockHashes(dst []uint64, r *traces.Request, isl, traceBS, bs int, salt uint64) []uint64 {
	if traceBS <= 0 {
		traceBS = bs
	}
	full := isl / bs
	var h uint64
	if traceBS%bs == 0 {
		per := traceBS / bs
		for k := range full {
			h = chain(h, contentID(r.HashIDs, k/per, salt), uint64(bs))
			dst = append(dst, h)
		}
		return dst
	}
	for k := range full {
		for s, e := k*bs, (k+1)*bs; s < e; {
			j := s / traceBS
			run := min(e, (j+1)*traceBS) - s
			h = chain(h, contentID(r.HashIDs, j, salt), uint64(run))
			s += run
		}
		dst = append(dst, h)
	}
	return dst
}
