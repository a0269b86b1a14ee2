package app_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/cmd/outflow/app"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/testkit/dbtest"
	"github.com/outflowhq/outflow/internal/testkit/geotest"
)

func TestStartFailsOnAGeoDatabaseThatIsNotACountryDatabase(t *testing.T) {
	t.Parallel()
	d := dbtest.New(t)
	junk := filepath.Join(t.TempDir(), "GeoLite2-Country.mmdb")
	require.NoError(t, os.WriteFile(junk, []byte("not a database"), 0o600))
	for path, want := range map[string]string{
		junk: "not a readable MaxMind DB file",
		geotest.Write(t, "GeoLite2-ASN", map[string]string{"192.0.2.0/24": "NL"}): "holds no countries",
	} {
		cfg, err := config.Load(func(k string) string {
			switch k {
			case "DATABASE_URL":
				return d.URL
			case "OUTFLOW_SECRET_KEY":
				return strings.Repeat("5e", 32)
			case "OUTFLOW_GEOIP_DB":
				return path
			}
			return ""
		})
		require.NoError(t, err)
		_, err = app.New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{API: true, Pool: d.Pool})
		require.ErrorContains(t, err, "OUTFLOW_GEOIP_DB "+path)
		require.ErrorContains(t, err, want)
	}
}
