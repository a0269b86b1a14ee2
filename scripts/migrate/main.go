// Command migrate applies Outflow's migrations to DATABASE_URL without building the whole binary, so
// `make schema` can rewrite schema.sql (which sqlc reads) even while generated query code is out of date.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/outflowhq/outflow/internal/platform/db"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := db.Migrate(context.Background(), os.Getenv("DATABASE_URL"), logger); err != nil {
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(1)
	}
}
