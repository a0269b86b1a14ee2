package app

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the HTTP series Outflow exports on /metrics.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "outflow_http_requests_total",
			Help: "HTTP requests served, by operation, method and status.",
		}, []string{"operation", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "outflow_http_request_duration_seconds",
			Help:    "Time to serve HTTP requests, by operation.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"operation"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

func (m *metrics) observe(operation, method string, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(operation, method, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(operation).Observe(elapsed.Seconds())
}
