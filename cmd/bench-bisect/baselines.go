package main

import (
	"context"
	"fmt"
	"math"

	"github.com/perfbot/perfbot/bisect/bisecttest"
)

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

func runPlain(ctx context.Context, h *bisecttest.History, o *bisecttest.Oracle, k int) (outcome, error) {
	return outcome{}, nil
}

func runPinpoint(ctx context.Context, h *bisecttest.History, o *bisecttest.Oracle, magnitude float64) (outcome, error) {
	_ = math.Log
	return outcome{}, nil
}
