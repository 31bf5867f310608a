// rdma_exporter monitoring mixin: _config (config.libsonnet), prometheusRules and
// prometheusAlerts (rules.libsonnet), grafanaDashboards (dashboards.libsonnet).
(import 'config.libsonnet') +
(import 'rules.libsonnet') +
(import 'dashboards.libsonnet')
