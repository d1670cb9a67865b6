import { BaseCommand } from '../../base.js';
import { clusterService } from '../../../modules/operations/cluster/cluster.service.js';
import { presentClusterStatus } from '../../../modules/operations/cluster/cluster.presenter.js';

export default class ClusterStatus extends BaseCommand {
  static override description =
    'List the nodes serving this database: alive or dead (heartbeat older than cluster.dead_after) and what each holds';
  static override examples = ['<%= config.bin %> cluster status', '<%= config.bin %> cluster status --json'];

  protected async execute() {
    const { flags } = await this.parse(ClusterStatus);
    return this.withStore(flags.config, async ({ store, clock, config }) => {
      const deadAfterMs = config.cluster.deadAfterMs;
      const nodes = await clusterService({ store, clock, deadAfterMs }).status();
      return presentClusterStatus(nodes, clock.now(), deadAfterMs);
    });
  }

  protected override async render(result: ReturnType<typeof presentClusterStatus>): Promise<void> {
    const rows = result.nodes.map((n) => ({
      node: n.id,
      state: n.state,
      host: n.host,
      pid: n.pid,
      heartbeat: n.heartbeat_age_ms === null ? '' : `${(n.heartbeat_age_ms / 1000).toFixed(1)} s ago`,
      sending: n.holds.queue_rows,
      'data started': n.holds.data_started,
      webhooks: n.holds.webhook_deliveries,
    }));
    process.stdout.write(this.renderTable(rows));
  }
}
