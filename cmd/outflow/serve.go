package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/outflowhq/outflow/cmd/outflow/app"
	"github.com/outflowhq/outflow/internal/eventing/realtime"
	"github.com/outflowhq/outflow/internal/platform/config"
	"github.com/outflowhq/outflow/internal/platform/db"
	apiusage "github.com/outflowhq/outflow/internal/trail/usage"
)

// role is what one `outflow serve` process runs; API and worker processes scale out independently against
// one database.
type role string

const (
	roleAPI    role = "api"
	roleWorker role = "worker"
	roleAll    role = "all"
)

func parseRole(s string) (role, error) {
	switch r := role(s); r {
	case roleAPI, roleWorker, roleAll:
		return r, nil
	}
	return "", fmt.Errorf("--role %q must be api, worker or all", s)
}

func (r role) api() bool    { return r != roleWorker }
func (r role) worker() bool { return r != roleAPI }

// serve runs until ctx is canceled, then shuts down in order: stop accepting and finish in-flight requests,
// stop the workers (letting running jobs finish), close the pool. listening, when set, is told the bound
// address (tests listen on port 0).
func serve(ctx context.Context, cfg config.Config, r role, logger *slog.Logger, listening func(net.Addr)) error {
	if err := cfg.RequireSecretKey(); err != nil {
		return err
	}
	if err := db.Migrate(ctx, cfg.DatabaseURL, logger); err != nil {
		return err
	}
	pool, err := db.Open(ctx, cfg.DatabaseURL, cfg.DBMaxConns)
	if err != nil {
		return err
	}
	defer pool.Close()

	sender, err := app.SystemMail(cfg, logger)
	if err != nil {
		return err
	}
	riverClient, err := app.NewJobs(cfg, pool, logger, sender, r.worker())
	if err != nil {
		return err
	}

	if r.worker() {
		if err := riverClient.Start(ctx); err != nil {
			return fmt.Errorf("start workers: %w", err)
		}
		logger.InfoContext(ctx, "workers started", slog.Int("max_workers", cfg.JobWorkers))
	}

	var httpServer *http.Server
	var recorder *apiusage.Recorder
	var gateway *realtime.Gateway
	serveErr := make(chan error, 1)
	if r.api() {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		recorder = apiusage.NewRecorder(pool, logger)
		gateway = realtime.New(pool, logger, realtime.Options{})
		root, err := app.New(app.Deps{Pool: pool, Logger: logger, Metrics: reg, Config: cfg, Usage: recorder, Jobs: riverClient,
			Realtime: gateway})
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", cfg.HTTPAddr)
		if err != nil {
			return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
		}
		httpServer = &http.Server{
			Handler:           root,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       time.Minute,
			WriteTimeout:      90 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		}
		go func() { serveErr <- httpServer.Serve(ln) }()
		logger.InfoContext(ctx, "serving", slog.String("addr", ln.Addr().String()), slog.String("api", "http://"+ln.Addr().String()+app.APIPrefix),
			slog.String("role", string(r)), slog.String("version", version))
		if listening != nil {
			listening(ln.Addr())
		}
	}

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("http server: %w", err)
	}
	logger.Info("shutting down", slog.Duration("timeout", cfg.ShutdownTimeout))
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()

	if httpServer != nil {
		if err := httpServer.Shutdown(shutdownCtx); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("http shutdown: %w", err))
		}
		// Shutdown leaves upgraded connections alone: the gateway closes its WebSockets (1001) itself.
		if err := gateway.Close(shutdownCtx); err != nil {
			runErr = errors.Join(runErr, err)
		}
		// The request log of the last requests is written before the pool closes.
		if err := recorder.Close(shutdownCtx); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("usage log: %w", err))
		}
	}
	if r.worker() {
		if err := riverClient.Stop(shutdownCtx); err != nil {
			runErr = errors.Join(runErr, fmt.Errorf("stop workers: %w", err))
		}
	}
	logger.Info("stopped")
	return runErr
}
