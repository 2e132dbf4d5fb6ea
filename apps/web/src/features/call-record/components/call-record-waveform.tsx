import PauseCircleOutlined from '@ant-design/icons/PauseCircleOutlined';
import PlayCircleOutlined from '@ant-design/icons/PlayCircleOutlined';
import { Button, Spin } from 'antd';
import { type Ref, useEffect, useImperativeHandle, useRef, useState } from 'react';
import type WaveSurfer from 'wavesurfer.js';
import { formatTalkTime } from '@/entities/call/utils/call-format';

export type WaveformHandle = {
  /** Moves the playhead to `seconds` and, unless told otherwise, plays from there. */
  seek: (seconds: number, play?: boolean) => void;
};

type Props = {
  url: string;
  /** Known length, shown before the audio is decoded. */
  durationMs: number | null;
  onTimeUpdate: (seconds: number) => void;
  onReload: () => void;
  ref?: Ref<WaveformHandle>;
};

/** The recording with its waveform; wavesurfer is imported here only, so it stays in this chunk. */
export function CallRecordWaveform({ url, durationMs, onTimeUpdate, onReload, ref }: Props) {
  const containerRef = useRef<HTMLDivElement>(null);
  const surferRef = useRef<WaveSurfer | null>(null);
  const timeHandler = useRef(onTimeUpdate);
  timeHandler.current = onTimeUpdate;
  const [ready, setReady] = useState(false);
  const [playing, setPlaying] = useState(false);
  const [time, setTime] = useState(0);
  const [duration, setDuration] = useState((durationMs ?? 0) / 1000);
  const [failed, setFailed] = useState(false);

  useEffect(() => {
    const container = containerRef.current;
    if (!container) return;
    let cancelled = false;
    let surfer: WaveSurfer | null = null;
    setReady(false);
    setFailed(false);
    void import('wavesurfer.js').then(({ default: WaveSurferClass }) => {
      if (cancelled) return;
      surfer = WaveSurferClass.create({
        container,
        url,
        height: 64,
        waveColor: '#c7d7fe',
        progressColor: '#4D8EFF',
        cursorColor: '#1d4ed8',
        barWidth: 2,
        barGap: 1,
        normalize: true,
      });
      surferRef.current = surfer;
      surfer.on('ready', (seconds) => {
        setDuration(seconds);
        setReady(true);
      });
      surfer.on('play', () => setPlaying(true));
      surfer.on('pause', () => setPlaying(false));
      surfer.on('finish', () => setPlaying(false));
      surfer.on('timeupdate', (seconds) => {
        setTime(seconds);
        timeHandler.current(seconds);
      });
      surfer.on('error', () => setFailed(true));
    });
    return () => {
      cancelled = true;
      surfer?.destroy();
      surferRef.current = null;
    };
  }, [url]);

  useImperativeHandle(
    ref,
    () => ({
      seek: (seconds, play = true) => {
        const surfer = surferRef.current;
        if (!surfer) return;
        surfer.setTime(seconds);
        if (play) void surfer.play();
      },
    }),
    [],
  );

  return (
    <div className="flex flex-col gap-2">
      <div className="flex items-center gap-3">
        <Button
          type="text"
          shape="circle"
          size="large"
          aria-label={playing ? '暂停' : '播放'}
          disabled={!ready}
          icon={playing ? <PauseCircleOutlined /> : <PlayCircleOutlined />}
          onClick={() => void surferRef.current?.playPause()}
        />
        <div ref={containerRef} className="min-w-0 flex-1" data-testid="call-waveform">
          {!ready && !failed && <Spin size="small" />}
        </div>
        <span className="w-28 shrink-0 text-right font-mono text-xs text-gray-500">
          {formatTalkTime(time)} / {formatTalkTime(duration)}
        </span>
      </div>
      {failed && (
        <p className="text-sm text-red-500">
          录音加载失败，链接可能已过期。
          <Button type="link" size="small" onClick={onReload}>
            重新加载
          </Button>
        </p>
      )}
    </div>
  );
}
