package bisect

import (
	"os"
	"strconv"
)

func init() {
	f := func(name string, p *float64) {
		if v, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
			*p = v
		}
	}
	i := func(name string, p *int) {
		if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
			*p = v
		}
	}
	f("T_ALPHA", &verifyAlpha)
	f("T_RALPHA", &residualAlpha)
	f("T_RTAIL", &residualSameTail)
	i("T_RMIN", &residualMinRuns)
	i("T_SCALEN", &minScaleRuns)
	i("T_RMAX", &residualMaxNew)
	f("T_SNAP", &snapDistance)
	f("T_REF", &refUncertainty)
	f("T_TENT", &tentativeConfidence)
	f("T_NRF", &notReproducedFactor)
}
