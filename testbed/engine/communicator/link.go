package communicator

import (
	"encoding/binary"
	"hash/crc32"
	"math"
)

// packetFloats is the payload of one packet, in floats (1 KiB).
const packetFloats = 256

// linkDepth is the number of packets in flight on one link.
const linkDepth = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// link is a one-way simulated PCIe interconnect between two ranks. Sending
// encodes the floats little-endian into packets, each led by the CRC-32C of
// its payload, and scrambles them for the wire; receiving descrambles,
// verifies and decodes them. The packets circulate between a free list and
// the wire, so a transfer allocates nothing.
type link struct {
	wire chan []byte
	free chan []byte
}

func newLink() *link {
	l := &link{wire: make(chan []byte, linkDepth), free: make(chan []byte, linkDepth)}
	for range linkDepth {
		l.free <- make([]byte, 4+4*packetFloats)
	}
	return l
}

// send transmits src. With staged set the packets take two hops through a
// host bounce buffer, as transfers between devices without peer-to-peer
// access do: each hop copies and checksums the payload again.
func (l *link) send(src []float32, staged bool, bounce []byte) {
	for off := 0; off < len(src); off += packetFloats {
		chunk := src[off:min(off+packetFloats, len(src))]
		p := <-l.free
		p = p[:4+4*len(chunk)]
		if staged {
			hop := bounce[:len(p)]
			encode(hop, chunk)
			scramble(hop)
			scramble(hop)
			verify(hop)
			copy(p, hop)
			seal(p)
		} else {
			encode(p, chunk)
		}
		scramble(p)
		l.wire <- p
	}
}

// recv receives len(dst) floats and adds them to dst, or copies them over
// dst when add is false.
func (l *link) recv(dst []float32, add bool) {
	for off := 0; off < len(dst); {
		p := <-l.wire
		scramble(p)
		verify(p)
		payload := p[4:]
		n := len(payload) / 4
		out := dst[off : off+n]
		if add {
			for i := range out {
				out[i] += math.Float32frombits(binary.LittleEndian.Uint32(payload[4*i:]))
			}
		} else {
			for i := range out {
				out[i] = math.Float32frombits(binary.LittleEndian.Uint32(payload[4*i:]))
			}
		}
		off += n
		l.free <- p[:cap(p)]
	}
}

// encode writes floats into p's payload and seals it.
func encode(p []byte, floats []float32) {
	payload := p[4 : 4+4*len(floats)]
	for i, v := range floats {
		binary.LittleEndian.PutUint32(payload[4*i:], math.Float32bits(v))
	}
	seal(p)
}

// seal writes the checksum of p's payload into its header.
func seal(p []byte) {
	binary.LittleEndian.PutUint32(p[:4], crc32.Checksum(p[4:], castagnoli))
}

// verify checks p's checksum. Memory does not flip bits, so a mismatch is a
// bug in the transport, not an input error.
func verify(p []byte) {
	if crc32.Checksum(p[4:], castagnoli) != binary.LittleEndian.Uint32(p[:4]) {
		panic("communicator: packet checksum mismatch")
	}
}

// scramble XORs p with the keystream of a 32-bit xorshift register, the way
// a PCIe physical layer whitens data with an LFSR; applying it twice gives
// p back. The register restarts with every packet.
func scramble(p []byte) {
	state := uint32(0x1d872b41)
	for i := 0; i+4 <= len(p); i += 4 {
		state ^= state << 13
		state ^= state >> 17
		state ^= state << 5
		w := p[i : i+4 : i+4]
		binary.LittleEndian.PutUint32(w, binary.LittleEndian.Uint32(w)^state)
	}
}
