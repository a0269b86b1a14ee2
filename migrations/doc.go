// Package migrations embeds the ordered, append-only SQL migrations of the application schema so the binary
// carries them: `outflow migrate` and start-up apply them without any file on disk.
package migrations

import "embed"

// FS holds every migration file; names sort in the order they are applied.
//
//go:embed *.sql
var FS embed.FS
