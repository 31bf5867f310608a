// The configuration of the end-to-end test (tests/e2e): the shipped config with windows and
// `for` durations short enough for a test that scrapes and evaluates every second.
{
  _config+:: {
    rateWindow: '10s',
    'for': std.mapWithKey(function(k, v) '2s', super['for']),
    windows+: {
      flap: '30s',
      linkDowned: '30s',
      physicalErrors: '30s',
      transport: '10s',
      stormEvents: '10s',
    },
  },
}
