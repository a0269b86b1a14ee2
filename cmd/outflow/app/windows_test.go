package app_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/outflowhq/outflow/cmd/outflow/app"
	"github.com/outflowhq/outflow/internal/campaigns/tracking"
	"github.com/outflowhq/outflow/internal/platform/config"
)

func TestAProcessWithATrackingWindowOutOfItsRangeDoesNotStart(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"DATABASE_URL": "postgres://outflow@127.0.0.1:1/none"}[k]
	})
	require.NoError(t, err)
	d := tracking.DefaultWindows()
	require.Equal(t, tracking.Windows{OpenMachine: cfg.OpenMachineWindow, ClickMachine: cfg.ClickMachineWindow,
		Burst: cfg.ClickBurstWindow, ProbableScanner: cfg.ProbableScannerWindow}, d,
		"the configuration's defaults are the documented windows")

	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	for _, bad := range []time.Duration{0, 901 * time.Second} {
		c := cfg
		c.ClickMachineWindow = bad
		_, err := app.New(context.Background(), c, logger, app.Options{API: true, Work: true})
		require.ErrorContains(t, err, "invalid configuration: the tracking windows (OUTFLOW_OPEN_MACHINE_WINDOW, OUTFLOW_CLICK_MACHINE_WINDOW")
		require.ErrorContains(t, err, "the click machine window is "+bad.String()+"; it must be between 1s and 15m0s",
			"refused before anything connects to the database")
	}
	c := cfg
	c.OpenMachineWindow, c.ClickMachineWindow, c.ClickBurstWindow, c.ProbableScannerWindow = 0, time.Hour, time.Second, time.Minute
	_, err = app.New(context.Background(), c, logger, app.Options{API: true})
	require.ErrorContains(t, err, "the open machine window is 0s")
	require.ErrorContains(t, err, "\n  the click machine window is 1h0m0s", "every problem on its own line")
	require.ErrorContains(t, err, "\n  the probable scanner window is 1m0s; it must be wider")
}
