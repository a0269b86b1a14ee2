// Package pagination implements the list envelope every collection uses: {data, pagination: {total,
// next_cursor, has_more}} with keyset paging behind opaque cursors.
//
// A cursor is the position of the last row of a page plus the sort order it was produced under, signed with
// an HMAC: clients cannot forge positions, and a cursor replayed under another sort is refused instead of
// silently skipping or repeating rows.
package pagination

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/outflowhq/outflow/internal/platform/apierror"
)

// maxCursorLen bounds what Decode will look at; real cursors are far shorter.
const maxCursorLen = 2048

// Cursors signs and verifies cursors with a key derived from the deployment secret.
type Cursors struct {
	key []byte
}

// NewCursors derives the cursor key from the deployment secret, so a cursor cannot be replayed as another
// kind of server-issued token.
func NewCursors(secret []byte) *Cursors {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("outflow/pagination-cursor/v1"))
	return &Cursors{key: mac.Sum(nil)}
}

type payload struct {
	Sort     string          `json:"s"`
	Position json.RawMessage `json:"p"`
}

// Encode returns the opaque cursor for position (any JSON-encodable value, usually the sort key and id of
// the last row) under sort, which names the order and direction (for example "created_at:desc").
func (c *Cursors) Encode(sort string, position any) (string, error) {
	pos, err := json.Marshal(position)
	if err != nil {
		return "", fmt.Errorf("encode cursor position: %w", err)
	}
	body, err := json.Marshal(payload{Sort: sort, Position: pos})
	if err != nil {
		return "", fmt.Errorf("encode cursor: %w", err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(body) + "." + enc.EncodeToString(c.sign(body)), nil
}

// Decode verifies cursor and fills position. A cursor that was tampered with, is not one of ours, or was
// issued under another sort answers 400 with code invalid_cursor.
func (c *Cursors) Decode(cursor, sort string, position any) error {
	bad := apierror.BadRequest("invalid_cursor", "The cursor is not valid for this list; start again without one.")
	if len(cursor) > maxCursorLen {
		return bad
	}
	b64, sig64, ok := strings.Cut(cursor, ".")
	if !ok {
		return bad
	}
	enc := base64.RawURLEncoding
	body, err := enc.DecodeString(b64)
	if err != nil {
		return bad
	}
	sig, err := enc.DecodeString(sig64)
	if err != nil || !hmac.Equal(sig, c.sign(body)) {
		return bad
	}
	var p payload
	if err := json.Unmarshal(body, &p); err != nil {
		return bad
	}
	if p.Sort != sort {
		return apierror.BadRequest("invalid_cursor", "The cursor was issued for another sort order; start again without one.")
	}
	if err := json.Unmarshal(p.Position, position); err != nil {
		return bad
	}
	return nil
}

func (c *Cursors) sign(body []byte) []byte {
	mac := hmac.New(sha256.New, c.key)
	mac.Write(body)
	return mac.Sum(nil)[:16]
}

// Limit resolves a requested page size. Unset takes def. Out of [1, max] either falls back to def (lenient,
// as some lists document) or answers 400 invalid_limit (strict).
func Limit(requested int, set bool, def, max int, strict bool) (int, error) {
	if !set {
		return def, nil
	}
	if requested < 1 || requested > max {
		if strict {
			return 0, apierror.BadRequest("invalid_limit", fmt.Sprintf("limit must be between 1 and %d.", max))
		}
		return def, nil
	}
	return requested, nil
}

// Page is one page of a list, ready to map onto the API's list envelope.
type Page[T any] struct {
	// Data is the page's rows, at most the requested limit.
	Data []T
	// NextCursor is the cursor of the following page, or nil on the last page.
	NextCursor *string
	// HasMore says whether another page follows.
	HasMore bool
	// Total is the number of rows across pages when the list can count them cheaply.
	Total *int64
}

// Build cuts a page from rows fetched with LIMIT limit+1 (the extra row only says that more follow) and
// encodes the cursor from the page's last row with position.
func Build[T any](c *Cursors, sort string, rows []T, limit int, position func(T) any) (Page[T], error) {
	page := Page[T]{Data: rows}
	if len(rows) <= limit {
		return page, nil
	}
	page.Data = rows[:limit]
	page.HasMore = true
	next, err := c.Encode(sort, position(page.Data[limit-1]))
	if err != nil {
		return Page[T]{}, err
	}
	page.NextCursor = &next
	return page, nil
}
