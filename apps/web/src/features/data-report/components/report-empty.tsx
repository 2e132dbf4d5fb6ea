import { Empty } from 'antd';
import { Link } from 'react-router';

/** An empty report says why it is empty and where to go to fill it. */
export function ReportEmpty({ text, link }: { text: string; link?: { to: string; label: string } }) {
  return (
    <Empty
      image={Empty.PRESENTED_IMAGE_SIMPLE}
      description={
        <span>
          {text}
          {link ? (
            <>
              {' '}
              <Link to={link.to}>{link.label}</Link>
            </>
          ) : null}
        </span>
      }
    />
  );
}
