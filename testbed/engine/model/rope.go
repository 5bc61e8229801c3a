package model

import "math"

// rope holds the rotary position embedding angles of every position.
type rope struct {
	half     int
	cos, sin []float32 // maxSeq × half
}

func newRope(headDim, maxSeq int) *rope {
	half := headDim / 2
	r := &rope{half: half, cos: make([]float32, maxSeq*half), sin: make([]float32, maxSeq*half)}
	for p := range maxSeq {
		for i := range half {
			theta := float64(p) / math.Pow(10000, float64(2*i)/float64(headDim))
			r.cos[p*half+i] = float32(math.Cos(theta))
			r.sin[p*half+i] = float32(math.Sin(theta))
		}
	}
	return r
}

// Apply rotates every head of x (heads × 2·half floats) to position pos.
func (r *rope) Apply(x []float32, heads, pos int) {
	c, s := r.cos[pos*r.half:(pos+1)*r.half], r.sin[pos*r.half:(pos+1)*r.half]
	for h := range heads {
		v := x[h*2*r.half : (h+1)*2*r.half]
		for i := range r.half {
			a, b := v[i], v[i+r.half]
			v[i] = a*c[i] - b*s[i]
			v[i+r.half] = a*s[i] + b*c[i]
		}
	}
}
