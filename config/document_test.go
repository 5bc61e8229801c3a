package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseEmptyDocument: a document that holds nothing is the empty
// configuration, whichever way it is written.
func TestParseEmptyDocument(t *testing.T) {
	for _, doc := range []string{"", "---", "---\n", "~\n", "null\n", "# nothing yet\n"} {
		_, err := Parse([]byte(doc), "perfbot.yaml")
		require.EqualError(t, err, "perfbot.yaml: empty configuration (repo.url, benchmarks and metrics are required)", "%q", doc)
	}
}
