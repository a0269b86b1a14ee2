package classify_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/outflowhq/outflow/internal/inbox/classify"
)

// BenchmarkClassify compares parsing a corpus message as the mail sync does (baseline) with parsing and
// classifying it (outflow); ns/op is per message.
func BenchmarkClassify(b *testing.B) {
	corpus := readCorpus(b, "corpus")
	raws := make([][]byte, 0, len(corpus))
	for _, l := range corpus {
		raw, err := os.ReadFile(filepath.Join("testdata", "corpus", filepath.FromSlash(l.file)))
		if err != nil {
			b.Fatal(err)
		}
		raws = append(raws, raw)
	}
	r := rules(b)
	b.Run("baseline", func(b *testing.B) {
		i := 0
		for b.Loop() {
			_ = parseMessage(raws[i%len(raws)])
			i++
		}
	})
	b.Run("outflow", func(b *testing.B) {
		i := 0
		for b.Loop() {
			m := parseMessage(raws[i%len(raws)])
			_ = r.Classify(m, classify.Keywords{}, m.Received)
			i++
		}
	})
}
