package pagination_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/outflowhq/outflow/internal/platform/pagination"
)

// BenchmarkCursor compares signing and verifying a cursor with plain JSON encoding and decoding of the same
// position.
func BenchmarkCursor(b *testing.B) {
	c := pagination.NewCursors([]byte(strings.Repeat("k", 32)))
	pos := position{CreatedAt: time.Now().UTC(), ID: uuid.New()}
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			raw, _ := json.Marshal(pos)
			var out position
			if err := json.Unmarshal(raw, &out); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("outflow", func(b *testing.B) {
		for b.Loop() {
			cur, _ := c.Encode("created_at:desc", pos)
			var out position
			if err := c.Decode(cur, "created_at:desc", &out); err != nil {
				b.Fatal(err)
			}
		}
	})
}
