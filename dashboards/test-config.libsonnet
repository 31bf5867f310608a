// The configuration of the end-to-end test (tests/e2e): the shipped config with windows and
// `for` durations short enough for a test that scrapes and evaluates every second.
{
  _config+:: {
    rateWindow: '10s',
    'for': std.mapWithKey(function(k, v) '2s', super['for']),
    keepFiringFor: '2s',
    // An acknowledged removal, exercised by tests/rules/acknowledged.test.yaml.
    forgetDevices: [{ instance: 'n1', device: 'mlx5_1' }],
    // The demo fabric mixes 4 RoCE and 4 InfiniBand PFs of one board: a tie the default rail
    // selector (most common board and link layer) breaks arbitrarily. Its rails are the
    // InfiniBand PFs (the link-down fault hits mlx5_1, which must page as a rail).
    rails+: { selector: 'link_layer="InfiniBand"' },
    // Rate windows are 30x shorter than shipped (10s for 5m): one InfiniBand receive error or
    // transmit discard in 10s already reads 0.1/s, the shipped floor. Scale the floors with
    // the windows so the healthy demo fabric's rare error does not fire.
    thresholds+: { receiveErrorsPerSecond: 3, transmitDiscardsPerSecond: 3 },
    windows+: {
      flap: '30s',
      linkDowned: '30s',
      physicalErrors: '30s',
      transport: '10s',
      stormEvents: '10s',
    },
  },
}
