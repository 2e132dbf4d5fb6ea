import InfoCircleOutlined from '@ant-design/icons/InfoCircleOutlined';
import type { KnowledgeCalibration } from '@callpilot/contracts';
import { Tooltip } from 'antd';

const percent = (rate: number) => `${Math.round(rate * 1000) / 10}%`;

const EXPLAINED =
  '校准：把知识库自己的问题和相似问当作来电者的提问（探测问题），看答对与答错时的相关度各落在哪里，' +
  '据此把相关度换算成置信度，使置信度达到 0.3 时很少答错。助手按置信度与阈值决定作答还是拒答。';

/** Whether the base's confidence is learned from its own questions or still the product default. */
export function KnowledgeCalibrationStatus({ calibration }: { calibration: KnowledgeCalibration | null }) {
  const calibrated = calibration !== null && !calibration.usesDefault;
  const probes = calibration ? calibration.positives + calibration.negatives : 0;
  const detail = !calibration
    ? '文档解析完成后自动校准。'
    : calibrated
      ? `在探测问题上，正确答案保留 ${percent(calibration.recall)}，误答 ${percent(calibration.wrongRate)}。`
      : `探测问题只有 ${probes} 条，太少，暂按默认值换算；添加问答对或相似问后会更准。`;
  return (
    <span className="inline-flex items-center gap-1 text-xs text-gray-500">
      <span>
        {calibrated
          ? `已校准：探测问题 ${probes} 条，误答率 ${percent(calibration.wrongRate)}`
          : '未校准（使用默认值）'}
      </span>
      <Tooltip title={`${EXPLAINED}${detail}`}>
        <InfoCircleOutlined aria-label="什么是校准" role="img" tabIndex={0} className="cursor-help" />
      </Tooltip>
    </span>
  );
}
