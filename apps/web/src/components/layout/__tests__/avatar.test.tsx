import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { AVATAR_PALETTE, Avatar, avatarColor, avatarInitials } from '../avatar';

describe('avatar', () => {
  it('shows the first Chinese character of a Chinese name', () => {
    expect(avatarInitials('王小明')).toBe('王');
  });

  it('shows the two initials of a two-word name', () => {
    expect(avatarInitials('jane doe')).toBe('JD');
  });

  it('shows the first two letters of a single-word name, upper-cased', () => {
    expect(avatarInitials('alice')).toBe('AL');
  });

  it('picks a stable colour from the 17-colour palette', () => {
    expect(AVATAR_PALETTE).toHaveLength(17);
    const colour = avatarColor('王小明');
    expect(AVATAR_PALETTE).toContain(colour);
    expect(avatarColor('王小明')).toBe(colour);
    const spread = new Set(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map(avatarColor));
    expect(spread.size).toBeGreaterThan(1);
  });

  it('renders the initials on the name colour', () => {
    render(<Avatar name="jane doe" />);
    const avatar = screen.getByTestId('avatar');
    expect(avatar.textContent).toBe('JD');
    expect(avatar.style.backgroundColor).not.toBe('');
  });
});
