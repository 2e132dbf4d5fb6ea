/**
 * Words a caller uses interchangeably in customer-service conversations (telecom, education,
 * retail after-sales, recruitment, appointments). Callers rarely say the words a knowledge base
 * was written in (退掉 for 退订, 寄出 for 发货); a query word is expanded with its group so that
 * full-text retrieval still connects them. Each group holds jieba-level words. Without an
 * embeddings provider this list is what lets paraphrases be found; extend it by domain.
 */
const GROUPS: string[] = [
  // cancelling, refunds, returns
  '取消 退订 退掉 注销 关闭 撤销 不要 不想要 停掉',
  '退款 退钱 退费 返还 退回 要回 退还',
  '退货 退回 寄回 退换',
  '换货 换 更换 调换 换新',
  // time
  '多久 多长时间 几天 多少天 何时 什么时候 时间 哪天 几点',
  '到账 到位 加上 入账',
  '开门 营业 营业时间 上班',
  // money
  '价格 费用 收费 资费 价钱 多少钱 花钱 钱 花费 扣费 费',
  '便宜 优惠 折扣 打折 减免 划算 实惠 活动 降价',
  '免费 不要钱 不收费 白送 赠送 送',
  '付款 支付 付钱 给钱 结账 买单 缴费 交钱 充值',
  '分期 分几个月 分月',
  '发票 开票 报销 凭证 单据 票据',
  '工资 薪资 薪水 待遇 收入 挣 底薪 月薪',
  '加班费 加班工资',
  '差价 补差 价保 补偿',
  '运费 邮费 快递费 包邮',
  '余额 剩多少 剩余',
  '欠费 没钱 停机',
  '定金 订金 预付',
  '违约金 赔偿 罚款',
  // places
  '地址 地点 位置 在哪 哪里 在哪儿 哪儿 哪个区 在哪里',
  '营业厅 门店 网点 店',
  '校区 学校 教室 机构',
  // problems
  '故障 坏 坏了 损坏 出问题 毛病 不能用 用不了 失灵',
  '维修 报修 修理 修',
  '慢 卡 卡顿 一卡一卡 不流畅 延迟 网速慢',
  '信号 无服务 没信号 打不出',
  '投诉 反映 不满意 意见 建议 举报',
  '失败 不成功 出错 报错',
  '丢 丢了 丢失 弄丢 遗失 挂失',
  '忘记 忘了 记不住 记不起来 想不起来',
  '质量 次品 瑕疵 坏的 质量问题',
  '烂 变质 腐烂 坏掉',
  '缺 少 漏发 缺件 数量不对 少发',
  '假货 正品 真假 山寨 冒牌',
  // people and service
  '人工 真人 客服 人工客服 服务员 专员',
  '老师 教师 师资 讲师',
  '孩子 小孩 儿童 小朋友 少儿 学生',
  '家人 家里人 亲人 爸妈 父母 老人',
  '师傅 工程师 技术员 上门',
  // network and phone
  '网速 网络 上网 网 宽带 网路',
  '提速 升级 更快 加速',
  '流量 上网 数据',
  '话费 电话费 通话费',
  '号码 号 手机号 电话号码',
  '手机卡 电话卡 卡 sim',
  '补卡 补办 重新办',
  '办卡 开户 入网 新号 办号 开卡 新办',
  '未成年 小孩 孩子 儿童 学生 16周岁以下 监护人',
  '境外 国外 出国 海外 港澳台',
  '过户 转给 转让 更名',
  '携号转网 换运营商 转网',
  '漫游 出国 国外 境外 国际',
  '增值业务 附加业务 增值服务 信息费',
  '详单 通话记录 记录 清单',
  '停机 停用 暂停 停 保号',
  '开机 恢复 复机 通',
  '实名 实名认证 登记身份 身份信息 身份证',
  '副卡 共享 共用 亲情',
  '移机 搬家 迁 迁移',
  '路由器 路由 无线路由',
  '光猫 猫 调制解调器',
  '机顶盒 电视 iptv',
  '密码 口令',
  '账号 帐号 账户',
  '续约 续签 继续签 合约到期 期满',
  '合约 合同 协议',
  // education
  '试听 先听 体验课 体验',
  '学费 课程费 课程费用 报名费',
  '课程 课 网课 线上课 直播课 科目',
  '回放 录像 重播 录播',
  '补课 缺课 请假 缺了',
  '教材 书 课本 讲义 资料',
  '证书 证 证明',
  '年龄 几岁 多大',
  '转班 换班 换一个班',
  '作业 练习 功课',
  '报名 报 报班 参加',
  '暑假 夏天 假期 暑期',
  '效果 进步 提高 提分 成绩',
  '一对一 单独 私教 个别',
  '班 班级 小班',
  '重学 重读 再上',
  '考试 考 测试',
  // retail
  '发货 寄出 发出 出库 寄',
  '物流 快递 包裹 配送 运输',
  '收货 签收 收到',
  '评价 评论 晒单 写评论',
  '保修 质保 保修期 保质',
  '安装 装 装好 组装',
  '会员 vip 开通会员',
  '优惠券 券 红包 抵扣',
  '尺码 尺寸 大小 码',
  '订单 单 下单',
  '商家 供应商 入驻 卖货 开店',
  '生鲜 水果 蔬菜 肉',
  // recruitment
  '岗位 职位 招聘 缺人 工作机会',
  '简历 求职材料 求职 应聘材料',
  '学历 文凭 毕业',
  '面试 考核 几轮',
  '培训 带教 教 学习',
  '住宿 宿舍 住 地方住',
  '兼职 周末 临时工',
  '晋升 升职 提拔 往上升',
  '年假 休假 假 放假 带薪假',
  '加班 超出工作时间 超时',
  '试用期 转正 考察',
  '应届 应届生 毕业生 学校出来',
  '福利 五险一金 补贴 待遇',
  '入职 上班 报到',
  '工作时间 上班时间 几个钟头 几小时',
];

const index = new Map<string, string[]>();
for (const line of GROUPS) {
  const words = line.split(' ');
  for (const word of words) {
    const others = words.filter((w) => w !== word);
    index.set(word, [...new Set([...(index.get(word) ?? []), ...others])]);
  }
}

/** The other words of every group this word is in. */
export const synonymsOf = (word: string): string[] => index.get(word) ?? [];
