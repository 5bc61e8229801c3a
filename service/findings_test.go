package service

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUniqueWarnings(t *testing.T) {
	got := uniqueWarnings([]string{
		"2 outlier runs were left out of the comparison",
		"a..b was not fully checked for a further change",
		"3 outlier runs were left out of the comparison",
		"a..b was not fully checked for a further change",
	})
	require.Equal(t, []string{
		"5 outlier runs were left out of the comparisons",
		"a..b was not fully checked for a further change",
	}, got)
	require.Nil(t, uniqueWarnings(nil))
}
