import { Args } from '@oclif/core';
import { BaseCommand } from '../../base.js';
import { clusterService } from '../../../modules/operations/cluster/cluster.service.js';

export default class ClusterRelease extends BaseCommand {
  static override description =
    "Release what a node holds (its mail being sent, its webhook deliveries) and forget it: for a node known to be gone before cluster.dead_after says so. A running node's recovery then queues again the mail whose data had not started and makes the rest ambiguous";
  static override examples = ['<%= config.bin %> cluster release node_3f9a…'];
  static override args = {
    node: Args.string({ description: 'node id (node_…), as cluster status lists it', required: true }),
  };

  protected async execute() {
    const { args, flags } = await this.parse(ClusterRelease);
    return this.withStore(flags.config, async ({ store, clock, config }) => {
      const r = await clusterService({ store, clock, deadAfterMs: config.cluster.deadAfterMs }).release(args.node);
      return { node: r.id, released: { queue_rows: r.queueRows, webhook_deliveries: r.webhookDeliveries } };
    });
  }
}
