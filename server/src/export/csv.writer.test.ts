import { csvCell, neutralise } from './csv.writer';

describe('csv.writer', () => {
  it('neutralises a formula after a separator followed by spaces, as one right after it', () => {
    expect(neutralise('x;=1+1')).toBe("x;'=1+1");
    expect(neutralise('x; =1+1')).toBe("x; '=1+1");
    expect(neutralise('x,   @SUM(A1)')).toBe("x,   '@SUM(A1)");
    expect(csvCell('x; =1+1')).toBe(`"x; '=1+1"`);
    expect(neutralise('x; 1+1')).toBe('x; 1+1');
  });
});
