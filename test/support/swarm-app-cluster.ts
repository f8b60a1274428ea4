// The cluster the Swarm app tests and benchmarks start from: three engines (swarm-cluster.ts) with the web
// test images v1 and v2 and the proxy image in the cluster's registry, the only one its nodes can pull from.
import { CADDY_IMAGE, ensureCaddyImage } from './caddy-image.js';
import { ensureTestImages, WEB_V1, WEB_V2 } from './images.js';
import { createCluster, destroyCluster, type Cluster } from './swarm-cluster.js';

export interface AppCluster {
  cluster: Cluster;
  /** The images' references in the cluster's registry. */
  v1: string;
  v2: string;
  caddy: string;
}

/** Builds the images if missing, makes the cluster and pushes them (one save: they share layers); removes the cluster if that fails. */
export async function createAppCluster(): Promise<AppCluster> {
  await Promise.all([ensureTestImages(), ensureCaddyImage()]);
  const cluster = await createCluster(3);
  try {
    const [v1, v2, caddy] = cluster.pushImages([WEB_V1, WEB_V2, CADDY_IMAGE]);
    return { cluster, v1: v1!, v2: v2!, caddy: caddy! };
  } catch (err) {
    destroyCluster(cluster);
    throw err;
  }
}
