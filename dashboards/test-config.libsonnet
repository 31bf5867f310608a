// The configuration of the end-to-end test (tests/e2e): the shipped config with windows and
// `for` durations short enough for a test that scrapes and evaluates every second.
{
  _config+:: {
    rateWindow: '10s',
    'for': std.mapWithKey(function(k, v) '2s', super['for']),
    keepFiringFor: '2s',
    // An acknowledged removal, exercised by tests/rules/acknowledged.test.yaml.
    forgetDevices: [{ instance: 'n1', device: 'mlx5_1' }],
    windows+: {
      flap: '30s',
      linkDowned: '30s',
      physicalErrors: '30s',
      transport: '10s',
      stormEvents: '10s',
    },
  },
}
