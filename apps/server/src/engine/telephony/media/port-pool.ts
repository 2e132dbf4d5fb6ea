import dgram from 'node:dgram';
import { MediaError } from './protocol';

export interface PortPoolOptions {
  min: number;
  max: number;
  bindAddress?: string;
}

/**
 * The RTP ports of one process: even ports in [min, max] (the odd neighbour is RTCP's by
 * convention, RFC 3550 §11). Ports are handed out round-robin rather than lowest-first, so a
 * port just released is not reused at once and stray packets of the previous call's far end
 * do not land in the next call. A port another program holds is skipped.
 */
export class PortPool {
  private readonly ports: number[];
  private readonly inUse = new Set<number>();
  private cursor = 0;
  private readonly bindAddress: string;

  constructor(private readonly options: PortPoolOptions) {
    const { min, max } = options;
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 1024 || max > 65535 || min > max) {
      throw new MediaError('BAD_ARGUMENT', `invalid RTP port range ${min}-${max} (1024-65535, min <= max)`);
    }
    this.ports = [];
    for (let port = min + (min % 2); port <= max; port += 2) this.ports.push(port);
    if (this.ports.length === 0) {
      throw new MediaError('BAD_ARGUMENT', `RTP port range ${min}-${max} holds no even port`);
    }
    this.bindAddress = options.bindAddress ?? '0.0.0.0';
  }

  get capacity(): number {
    return this.ports.length;
  }

  get used(): number {
    return this.inUse.size;
  }

  /** Binds the next free even port; fails when every port of the range is taken. */
  async allocate(): Promise<{ port: number; socket: dgram.Socket }> {
    for (let tried = 0; tried < this.ports.length; tried++) {
      const port = this.ports[this.cursor] as number;
      this.cursor = (this.cursor + 1) % this.ports.length;
      if (this.inUse.has(port)) continue;
      this.inUse.add(port);
      const socket = await bind(port, this.bindAddress);
      if (socket) return { port, socket };
      this.inUse.delete(port);
    }
    throw new MediaError(
      'RTP_PORTS_EXHAUSTED',
      `no free RTP port in ${this.options.min}-${this.options.max} (${this.inUse.size} in use by calls)`,
    );
  }

  release(port: number): void {
    this.inUse.delete(port);
  }
}

function bind(port: number, address: string): Promise<dgram.Socket | null> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket({ type: 'udp4' });
    const onError = () => {
      socket.close();
      resolve(null);
    };
    socket.once('error', onError);
    socket.bind({ port, address, exclusive: true }, () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}
