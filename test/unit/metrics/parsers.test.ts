// The pure readers of the two stats sources: the engine's one-shot document (cgroup v1 and v2 cache
// fields, no cap = the host's memory) and the kernel's files (net/dev, blkio v1, io.stat v2, key/value).
import { describe, expect, it } from 'vitest';
import { countersOf } from '../../../src/runtime/docker-stats.js';
import { blockIo, keyedValue, netDev } from '../../../src/runtime/cgroup-stats.js';
import { linePath } from '../../../src/ui/chart.js';

describe('stats readers', () => {
  it('reads the engine document: memory without page cache, the cap unless it is the host, networks and block I/O summed', () => {
    const doc = {
      cpu_stats: { cpu_usage: { total_usage: 5e9 } },
      memory_stats: { usage: 100, limit: 64, stats: { total_inactive_file: 30 } },
      networks: { eth0: { rx_bytes: 10, tx_bytes: 20 }, eth1: { rx_bytes: 1, tx_bytes: 2 } },
      blkio_stats: { io_service_bytes_recursive: [{ op: 'Read', value: 7 }, { op: 'write', value: 9 }, { op: 'Total', value: 16 }] },
    };
    expect(countersOf(doc, 1000, 1024)).toEqual({ atMs: 1000, cpuNs: 5e9, memoryBytes: 70, memoryLimitBytes: 64, rxBytes: 11, txBytes: 22, readBytes: 7, writeBytes: 9 });
    expect(countersOf({ ...doc, memory_stats: { usage: 100, limit: 1024, stats: { inactive_file: 10 } } }, 1, 1024)).toMatchObject({ memoryBytes: 90, memoryLimitBytes: null });
    expect(countersOf({ memory_stats: {} }, 1, 1024)).toBeUndefined(); // a stopped container
  });

  it('reads the kernel files', () => {
    const dev = 'Inter-|   Receive\n face |bytes packets\n    lo:  500 1 0 0 0 0 0 0 500 1 0 0 0 0 0 0\n  eth0:  290 3 0 0 0 0 0 0 120 2 0 0 0 0 0 0\n';
    expect(netDev(dev)).toEqual({ rx: 290, tx: 120 });
    expect(blockIo('8:0 Read 4096\n8:0 Write 8192\n8:0 Total 12288\nTotal 12288\n', 1)).toEqual({ read: 4096, write: 8192 });
    expect(blockIo('8:0 rbytes=100 wbytes=200 rios=1 wios=2\n259:0 rbytes=1 wbytes=2\n', 2)).toEqual({ read: 101, write: 202 });
    expect(keyedValue('usage_usec 1234\nuser_usec 1000\n', 'usage_usec')).toBe(1234);
    expect(keyedValue('usage_usec 1234\nuser_usec 1000\n', 'user_usec')).toBe(1000);
    expect(keyedValue('cache 5\ntotal_inactive_file 77', 'total_inactive_file')).toBe(77); // last line, no newline
    expect(keyedValue('total_inactive_file_x 1\ninactive_file 9\n', 'inactive_file')).toBe(9); // a longer key is not it
    expect(keyedValue('x_usage_usec 3\n', 'usage_usec')).toBeUndefined();
  });

  it('draws a chart line with a gap where a value is unknown', () => {
    expect(linePath([], 1)).toBe('');
    const d = linePath([0, 1, null, 0.5], 1);
    expect(d.match(/M/g)).toHaveLength(2);
    expect(d.startsWith('M4.0 116.0L')).toBe(true);
  });
});
